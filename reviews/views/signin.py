"""The staff sign-in page: Django's, refusing an address that sprays passwords across usernames."""
import logging

from django.contrib.auth import views as auth_views

from ..web.throttling import address_locked_out, locked_out_response

logger = logging.getLogger(__name__)


class SignInView(auth_views.LoginView):
    template_name = "registration/login.html"

    def post(self, request, *args, **kwargs):
        # Checked before the password is: a refused address learns nothing from the answer.
        if address_locked_out(request):
            logger.warning("sign-in refused: too many failures from this address across usernames")
            return locked_out_response(request)
        return super().post(request, *args, **kwargs)
