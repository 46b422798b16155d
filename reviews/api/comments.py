"""Comments between reviewers on one candidate, through the API (issue 38.6): the same
service and selector as the item's page, with the review scope."""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from ..errors import NotFound
from ..models import Candidate, Scope
from ..models.comments import MAX_COMMENT_LENGTH
from ..selectors.item_history import candidate_comments
from ..services.comments import candidate_comment_add
from .base import ApiView, StrictSerializer
from .fields import TextField


class CommentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    author = serializers.CharField(help_text="A staff member's username, or the API key as the audit log names it.")
    actor = serializers.CharField(help_text="As the audit trail records it: `reviewer:<id>` or `api_key:<prefix>`.")
    body = serializers.CharField()
    created_at = serializers.DateTimeField(source="at")


class CommentListSerializer(serializers.Serializer):
    results = CommentSerializer(many=True)


class CandidateCommentsApi(ApiView):
    """GET · POST /api/v1/review/candidates/{id}/comments"""

    required_scope = Scope.REVIEW

    class InputSerializer(StrictSerializer):
        body = TextField(
            max_length=MAX_COMMENT_LENGTH, help_text="The comment; a credential in it is masked before it is stored."
        )

    def _candidate(self, candidate_id: int) -> Candidate:
        candidate = Candidate.objects.filter(tenant=self.tenant, pk=candidate_id).select_related("subject").first()
        if candidate is None:  # another tenant's item included
            raise NotFound("No such candidate.")
        return candidate

    @extend_schema(responses={200: CommentListSerializer}, summary="A candidate's comments between reviewers, oldest first")
    def get(self, request, candidate_id: int):
        comments = candidate_comments(candidate=self._candidate(candidate_id))
        return Response({"results": CommentSerializer(comments, many=True).data})

    @extend_schema(
        request=InputSerializer, responses={201: CommentSerializer},
        summary="Add a comment to a candidate (audited as candidate.commented)",
    )
    def post(self, request, candidate_id: int):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        comment = candidate_comment_add(
            tenant=self.tenant, candidate_id=candidate_id, author=None,
            body=serializer.validated_data["body"], actor=self.actor,
        )
        [shown] = [c for c in candidate_comments(candidate=comment.candidate) if c.id == comment.pk]
        return Response(CommentSerializer(shown).data, status=201)
