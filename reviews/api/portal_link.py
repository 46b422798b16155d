"""POST /api/v1/users/{user_id}/portal-link: a link to the subject's "my memories" page (SPEC §7)."""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from ..models import Scope
from ..services.portal import portal_link_create
from .base import ApiView, StrictSerializer


class PortalLinkCreateApi(ApiView):
    """The host application hands the link to its signed-in user; it opens once, then expires."""

    required_scope = Scope.ADMIN

    class InputSerializer(StrictSerializer):
        """No fields yet: an empty body (or ``{}``) asks for a link with the configured lifetime."""

    class OutputSerializer(serializers.Serializer):
        url = serializers.URLField()
        expires_at = serializers.DateTimeField()

    @extend_schema(
        request=InputSerializer,
        responses={201: OutputSerializer},
        summary="Create a signed, expiring, single-use link to a subject's self-service page",
    )
    def post(self, request, user_id: str):
        self.InputSerializer(data=request.data if request.data else {}).is_valid(raise_exception=True)
        url, expires_at = portal_link_create(tenant=self.tenant, user_id=user_id, actor=self.actor)
        body = self.OutputSerializer({"url": url, "expires_at": expires_at}).data
        return Response(body, status=status.HTTP_201_CREATED)
