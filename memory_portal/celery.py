"""Celery application.

Without ``CELERY_BROKER_URL`` the settings switch Celery to eager mode, so the embedded
default (SQLite, one process) runs every task in-process and needs no broker.
"""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_portal.settings")

app = Celery("memory_portal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
