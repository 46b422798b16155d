from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviews"
    verbose_name = "Memory Portal"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Here, not at the top: both import models, which the app registry loads first.
        from . import tasks  # noqa: F401 - registers the tasks the services dispatch by name
        from .web import throttling  # noqa: F401 - connects the lockout's audit event
