from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviews"
    verbose_name = "Memory Portal"
    default_auto_field = "django.db.models.BigAutoField"
