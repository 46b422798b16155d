import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_portal.settings")
application = get_wsgi_application()

# Import the URLconf, and with it every view, now rather than on the first request: a
# forking server (gunicorn.conf.py preloads the app) then shares these modules between
# its workers, and no worker's first request waits a third of a second for the imports.
get_resolver().url_patterns
