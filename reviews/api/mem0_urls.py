"""Routes of the mem0-compatible surface (SPEC §7a), as the ``mem0ai`` client calls them."""
from django.urls import path

from .mem0 import AddApi, DeleteAllApi, EntitiesApi, HistoryApi, ListApi, MemoryApi, PingApi, SearchApi

urlpatterns = [
    path("v1/ping/", PingApi.as_view(), name="ping"),
    path("v3/memories/add/", AddApi.as_view(), name="add"),
    path("v3/memories/", ListApi.as_view(), name="list"),
    path("v3/memories/search/", SearchApi.as_view(), name="search"),
    path("v1/memories/", DeleteAllApi.as_view(), name="delete-all"),
    path("v1/memories/<int:memory_id>/", MemoryApi.as_view(), name="memory"),
    path("v1/memories/<int:memory_id>/history/", HistoryApi.as_view(), name="history"),
    path("v1/entities/", EntitiesApi.as_view(), name="entities"),
]
