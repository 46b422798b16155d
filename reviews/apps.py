from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviews"
    verbose_name = "Memory Portal"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import throttling  # noqa: F401 - connects the lockout's audit event
