"""The project's leaner forms of django-csp's middleware and Django's messages and locale
middlewares (reviews/web/middleware.py) answer exactly as the libraries' own do."""
import pytest
from csp.constants import NONCE
from csp.decorators import csp_exempt, csp_replace, csp_update
from csp.exceptions import CSPNonceError
from csp.middleware import CSPMiddleware
from django.conf import settings as django_settings
from django.conf.urls.i18n import i18n_patterns
from django.contrib import messages
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpResponse
from django.middleware.locale import LocaleMiddleware
from django.test import RequestFactory
from django.urls import path as url_path
from django.utils import translation
from django.utils.functional import empty

from reviews.web.middleware import LazyMessageMiddleware, PrefixFreeLocaleMiddleware, SitePolicyCSPMiddleware

POLICY_HEADERS = ("Content-Security-Policy", "Content-Security-Policy-Report-Only")


def plain(request):
    return HttpResponse("ok")


def with_nonce(request):
    return HttpResponse(f"<script nonce='{request.csp_nonce}'></script>")


def not_found(request):
    return HttpResponse("gone", status=404)


def header_already_set(request):
    response = HttpResponse("ok")
    response["Content-Security-Policy"] = "default-src 'none'"
    return response


VIEWS = {
    "plain": plain,
    "nonce": with_nonce,
    "updated": csp_update({"img-src": ["data:"]})(plain),
    "updated, report-only": csp_update({"img-src": ["data:"]}, REPORT_ONLY=True)(plain),
    "replaced": csp_replace({"default-src": ["https://cdn.example"]})(plain),
    "exempt": csp_exempt()(plain),
    "exempt, report-only": csp_exempt(REPORT_ONLY=True)(plain),
    "header already set": header_already_set,
    "not found": not_found,
}


def answer(middleware_class, view, path="/somewhere/"):
    """The policy headers ``middleware_class`` gives ``view``'s answer, and the request."""
    request = RequestFactory().get(path)
    middleware = middleware_class(view)
    response = middleware(request)
    return {name: response.get(name) for name in POLICY_HEADERS}, request


@pytest.fixture(params=["enforced", "report-only", "both, one prefix excluded", "off"])
def policy_settings(request, settings):
    site = {"DIRECTIVES": {"default-src": ["'self'"], "script-src": ["'self'", NONCE]}}
    if request.param == "report-only":
        settings.CONTENT_SECURITY_POLICY, settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = None, site
    elif request.param == "both, one prefix excluded":
        settings.CONTENT_SECURITY_POLICY = {**site, "EXCLUDE_URL_PREFIXES": ["/excluded"]}
        settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    elif request.param == "off":
        settings.CONTENT_SECURITY_POLICY = settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = None
    else:
        settings.CONTENT_SECURITY_POLICY, settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = site, None
    return request.param


class TestSitePolicyCSPMiddleware:
    @pytest.mark.parametrize("debug", [False, True], ids=["production", "debug"])
    @pytest.mark.parametrize("path", ["/somewhere/", "/excluded/page"])
    @pytest.mark.parametrize("view", VIEWS, ids=list(VIEWS))
    def test_gives_every_answer_django_csps_headers(self, policy_settings, settings, view, path, debug):
        settings.DEBUG = debug
        ours, _ = answer(SitePolicyCSPMiddleware, VIEWS[view], path)
        theirs, _ = answer(CSPMiddleware, VIEWS[view], path)
        if view == "nonce":  # each answer has a nonce of its own
            ours, theirs = ({k: v and v.split("'nonce-")[0] for k, v in h.items()} for h in (ours, theirs))
        assert ours == theirs

    def test_a_changed_setting_is_the_next_answers_policy(self, settings):
        settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'self'"]}}
        assert answer(SitePolicyCSPMiddleware, plain)[0]["Content-Security-Policy"] == "default-src 'self'"
        settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}
        assert answer(SitePolicyCSPMiddleware, plain)[0]["Content-Security-Policy"] == "default-src 'none'"

    def test_a_page_using_a_nonce_gets_its_own_in_the_header(self, settings):
        settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"script-src": ["'self'", NONCE]}}
        first, request = answer(SitePolicyCSPMiddleware, with_nonce)
        second, _ = answer(SitePolicyCSPMiddleware, with_nonce)
        assert f"'nonce-{request._csp_nonce}'" in first["Content-Security-Policy"]
        assert first != second

    def test_a_nonce_asked_for_after_the_header_is_written_is_an_error(self, settings):
        _, request = answer(SitePolicyCSPMiddleware, plain)
        with pytest.raises(CSPNonceError):
            str(request.csp_nonce)


def adds_a_message(request):
    messages.info(request, "Saved.")
    return HttpResponse("ok")


def shows_the_messages(request):
    return HttpResponse(" | ".join(str(message) for message in messages.get_messages(request)))


class TestLazyMessageMiddleware:
    def serve(self, middleware_class, view, cookies=None):
        request = RequestFactory().get("/")
        request.COOKIES.update(cookies or {})
        SessionMiddleware(lambda r: None).process_request(request)
        response = middleware_class(view)(request)
        return request, response

    def test_a_request_that_never_uses_messages_builds_no_storage_and_writes_nothing(self):
        request, response = self.serve(LazyMessageMiddleware, plain)
        assert request._messages._wrapped is empty
        assert "messages" not in response.cookies
        _, django_response = self.serve(MessageMiddleware, plain)
        assert "messages" not in django_response.cookies

    @pytest.mark.parametrize("middleware_class", [LazyMessageMiddleware, MessageMiddleware])
    def test_a_message_added_is_stored_and_shown_on_the_next_request(self, middleware_class):
        _, response = self.serve(middleware_class, adds_a_message)
        cookie = response.cookies["messages"].value
        assert cookie
        _, shown = self.serve(middleware_class, shows_the_messages, {"messages": cookie})
        assert shown.content == b"Saved."
        assert shown.cookies["messages"].value == ""  # shown once: the cookie is cleared


# A URLconf whose pages carry a language prefix (this module, for the locale tests).
urlpatterns = i18n_patterns(url_path("page/", lambda request: HttpResponse("ok")))
PREFIXED_URLCONF = __name__

LOCALE_REQUESTS = {
    "no preference": {},
    "Accept-Language zh-hans": {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9,en;q=0.5"},
    "Accept-Language of no language we have": {"HTTP_ACCEPT_LANGUAGE": "fr-FR"},
    "language cookie": {"HTTP_COOKIE": f"{django_settings.LANGUAGE_COOKIE_NAME}=zh-hans"},
    "language cookie of no language": {"HTTP_COOKIE": f"{django_settings.LANGUAGE_COOKIE_NAME}=xx"},
}


class TestPrefixFreeLocaleMiddleware:
    def serve(self, middleware_class, view, *, path, urlconf=None, headers=()):
        request = RequestFactory().get(path, **dict(headers))
        if urlconf:
            request.urlconf = urlconf
        response = middleware_class(view)(request)
        answer = (response.status_code, response.get("Location"), response.get("Vary"),
                  response.get("Content-Language"), request.LANGUAGE_CODE, translation.get_language())
        translation.deactivate()
        return answer

    @pytest.mark.parametrize("urlconf", [None, PREFIXED_URLCONF], ids=["no prefixes", "i18n_patterns"])
    @pytest.mark.parametrize("path", ["/api/v1/recall", "/zh-hans/page/", "/page/", "/en/nowhere"])
    @pytest.mark.parametrize("view", [plain, not_found], ids=["found", "not found"])
    @pytest.mark.parametrize("headers", LOCALE_REQUESTS.values(), ids=list(LOCALE_REQUESTS))
    def test_answers_as_djangos_own(self, urlconf, path, view, headers):
        ours = self.serve(PrefixFreeLocaleMiddleware, view, path=path, urlconf=urlconf, headers=headers)
        theirs = self.serve(LocaleMiddleware, view, path=path, urlconf=urlconf, headers=headers)
        assert ours == theirs

    def test_a_language_asked_for_is_the_one_answered_in(self):
        status, _, vary, content_language, request_language, _ = self.serve(
            PrefixFreeLocaleMiddleware, plain, path="/api/v1/recall",
            headers=LOCALE_REQUESTS["Accept-Language zh-hans"],
        )
        assert (status, vary, content_language, request_language) == (200, "Accept-Language", "zh-hans", "zh-hans")

    def test_a_prefixed_page_missing_its_prefix_is_redirected_as_django_does(self):
        status, location, *_ = self.serve(PrefixFreeLocaleMiddleware, not_found, path="/page/",
                                          urlconf=PREFIXED_URLCONF)
        assert (status, location) == (302, "/en/page/")
