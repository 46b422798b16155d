"""Pages: the reviewer dashboard and the subject's self-service portal."""
from django.contrib.auth import views as auth_views
from django.urls import include, path

from .views import home

app_name = "reviews"

urlpatterns = [
    path("", home.home, name="home"),
    path("login/", auth_views.LoginView.as_view(template_name="registration/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(next_page="reviews:home"), name="logout"),
    path("me/", include("reviews.portal_urls")),
]
