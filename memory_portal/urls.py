from csp.constants import SELF, UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib import admin
from django.http import HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from reviews.api.health import healthz, readyz
from reviews.views.metrics import metrics


def swagger_ui_policy(view):
    """Swagger UI's page loosens the site's policy for itself alone: its template carries an
    inline <style> and its stylesheet data: images. Its script stays a file of its own
    (the split view), so scripts are as strict as everywhere; either policy mode applies."""
    extra = {"style-src": [SELF, UNSAFE_INLINE], "img-src": [SELF, "data:"]}
    return csp_update(extra, REPORT_ONLY=True)(csp_update(extra)(view))


def favicon(request):
    """The site's icon where a browser looks for it unasked. The portal's pages name it
    (base.html); the API's JSON answers cannot, and each visit to one logged a 404."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))


urlpatterns = [
    path("favicon.ico", favicon, name="favicon"),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics, name="metrics"),
    path("api/v1/", include(("reviews.api.urls", "api"), namespace="api")),
    path("compat/mem0/", include(("reviews.api.mem0_urls", "mem0"), namespace="mem0")),
    path("api/schema/", SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]), name="schema"),
    path(
        "api/docs/",
        swagger_ui_policy(
            SpectacularSwaggerSplitView.as_view(url_name="schema", authentication_classes=[], permission_classes=[])
        ),
        name="api-docs",
    ),
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("reviews.urls")),
]

handler403 = "reviews.views.errors.permission_denied"
handler404 = "reviews.views.errors.not_found"
handler500 = "reviews.views.errors.server_error"
