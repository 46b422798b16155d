"""The review API of SPEC §7: the queue and the decisions, through the same services as the pages."""
from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import serializers
from rest_framework.response import Response

from ..models import Candidate, CandidateFlag, Scope, Sensitivity
from ..selectors.queue import (
    MAX_QUERY_LENGTH,
    QUEUE_AGES,
    QUEUE_FLAGS,
    QUEUE_MAX_PAGE_SIZE,
    QUEUE_PAGE_SIZE,
    QUEUE_PHASES,
    QueueClaims,
    QueueCursor,
    QueueFilters,
    QueueSort,
    review_queue_page,
)
from ..services.candidates import candidate_approve, candidate_defer, candidate_reject
from .base import ApiErrorSerializer, ApiView, StrictSerializer, next_page_url, single_valued
from .fields import FloatField, IdentifierField, IntegerField, TextField


class ConflictSerializer(serializers.Serializer):
    """The active fact a candidate disagrees with."""

    fact_id = serializers.IntegerField(source="pk")
    value = serializers.CharField()
    version = serializers.IntegerField()
    confidence = serializers.FloatField()
    source = serializers.CharField()
    source_message_id = serializers.CharField()
    updated_at = serializers.DateTimeField()


class ReviewCandidateSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    version = serializers.IntegerField()
    user_id = serializers.CharField(source="subject.user_id")
    entity_type = serializers.CharField()
    entity_id = serializers.CharField(source="entity_ref_id")
    field = serializers.CharField()
    value = serializers.CharField()
    confidence = serializers.FloatField()
    kind = serializers.CharField()
    scope = serializers.CharField()
    thread_id = serializers.CharField()
    status = serializers.CharField()
    reason = serializers.CharField()
    conflict = serializers.SerializerMethodField()
    source = serializers.CharField()
    source_message_id = serializers.CharField()
    evidence = serializers.CharField()
    extractor = serializers.CharField()
    prompt_version = serializers.CharField()
    flags = serializers.ListField(child=serializers.CharField())
    decided_by = serializers.CharField()
    decided_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    claimed_by = serializers.SerializerMethodField()

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_claimed_by(self, candidate: Candidate) -> str | None:
        """Who holds a live claim on it (an actor string), or null."""
        live = candidate.claimed_by and candidate.claim_expires_at and candidate.claim_expires_at > timezone.now()
        return candidate.claimed_by if live else None

    @extend_schema_field(ConflictSerializer(allow_null=True))
    def get_conflict(self, candidate: Candidate) -> dict | None:
        if not candidate.has_conflict or candidate.conflict_fact is None:
            return None
        return ConflictSerializer(candidate.conflict_fact).data


class ReviewQueueApi(ApiView):
    """GET /api/v1/review/candidates"""

    required_scope = Scope.REVIEW

    class InputSerializer(StrictSerializer):
        reads_query_text = True  # query parameters: every value is text (api/fields.py)

        status = serializers.ChoiceField(choices=sorted(QUEUE_PHASES), required=False, default="pending_review")
        user_id = IdentifierField(required=False, default="")
        entity_type = TextField(max_length=64, required=False, default="")
        field = TextField(
            max_length=80, required=False, default="", help_text="A field name, or `relation:*` for any relation."
        )
        sensitivity = serializers.ChoiceField(choices=Sensitivity.values, required=False, default="")
        min_confidence = FloatField(min_value=0.0, max_value=1.0, required=False, default=None)
        max_confidence = FloatField(min_value=0.0, max_value=1.0, required=False, default=None)
        conflict = serializers.BooleanField(required=False, default=None, allow_null=True)
        new_entity = serializers.BooleanField(required=False, default=None, allow_null=True)
        age = serializers.ChoiceField(choices=list(QUEUE_AGES), required=False, default="")
        flag = serializers.ChoiceField(
            choices=list(QUEUE_FLAGS), required=False, default="", help_text="Only items carrying this flag (`conflict`: a conflict)."
        )
        q = TextField(
            max_length=MAX_QUERY_LENGTH,
            required=False,
            default="",
            trim_whitespace=True,
            help_text="Free-text search: a case-insensitive substring of the value, the evidence or the user id.",
        )
        sort = serializers.ChoiceField(
            choices=list(QueueSort.ALL),
            required=False,
            default=QueueSort.OLDEST,
            help_text="`oldest` (default), `newest`, `confidence` (lowest first), `priority` (contested, then conflicts).",
        )
        claims = serializers.ChoiceField(
            choices=[choice for choice in QueueClaims.CHOICES if choice],
            required=False,
            default=QueueClaims.POOL,
            help_text="Colleagues' live claims are left out unless `all`; `mine`: only this key's claims.",
        )
        limit = IntegerField(min_value=1, max_value=QUEUE_MAX_PAGE_SIZE, required=False, default=QUEUE_PAGE_SIZE)
        cursor = TextField(max_length=200, required=False, default="")

    class OutputSerializer(serializers.Serializer):
        results = ReviewCandidateSerializer(many=True)
        next = serializers.URLField(allow_null=True)

    @extend_schema(
        parameters=[InputSerializer],
        responses={200: OutputSerializer},
        summary="The review queue: pending_review first, oldest first, keyset-paginated",
    )
    def get(self, request):
        params = self.InputSerializer(data=single_valued(request.query_params))
        params.is_valid(raise_exception=True)
        data = dict(params.validated_data)
        limit, token = data.pop("limit"), data.pop("cursor")
        filters = QueueFilters(**data)
        page = review_queue_page(
            tenant=self.tenant,
            filters=filters,
            cursor=QueueCursor.decode(token) if token else None,
            limit=limit,
            related=("subject", "conflict_fact"),
            viewer=str(self.actor),
        )
        next_url = next_page_url(request, page.next_cursor.encode()) if page.next_cursor is not None else None
        return Response({"results": ReviewCandidateSerializer(page.candidates, many=True).data, "next": next_url})


class ReviewDecisionApi(ApiView):
    """Shared shape of the three decision endpoints; each names its service call."""

    required_scope = Scope.REVIEW

    class InputSerializer(StrictSerializer):
        version = IntegerField(min_value=1)
        reason = TextField(max_length=2000, required=False, allow_blank=True, default="")

    def decide(self, *, candidate_id: int, data: dict) -> Candidate:
        raise NotImplementedError

    def post(self, request, candidate_id: int):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        candidate = self.decide(candidate_id=candidate_id, data=serializer.validated_data)
        candidate = Candidate.objects.select_related("subject", "conflict_fact").get(pk=candidate.pk)
        return Response(ReviewCandidateSerializer(candidate).data)


class ReviewApproveApi(ReviewDecisionApi):
    """POST /api/v1/review/candidates/{id}/approve — with ``value`` it is edit-then-approve."""

    class InputSerializer(ReviewDecisionApi.InputSerializer):
        value = TextField(max_length=4000, required=False, trim_whitespace=False)

    def decide(self, *, candidate_id, data):
        return candidate_approve(
            tenant=self.tenant,
            candidate_id=candidate_id,
            version=data["version"],
            value=data.get("value"),
            note=data["reason"],
            actor=self.actor,
        )


class ReviewRejectApi(ReviewDecisionApi):
    """POST /api/v1/review/candidates/{id}/reject — a reason is required."""

    class InputSerializer(ReviewDecisionApi.InputSerializer):
        reason = TextField(
            max_length=2000, required=False, allow_blank=True, default="",
            help_text="Free text; required unless `reason_label` is given.",
        )
        reason_label = TextField(
            max_length=200, required=False, default="", allow_blank=True,
            help_text="One of the tenant's reject reasons (its policy's `reject_reasons`).",
        )

        def validate(self, attrs):
            if not attrs["reason"].strip() and not attrs["reason_label"]:
                raise serializers.ValidationError({"reason": "A reason or a reason_label is required to reject."})
            return attrs

    def decide(self, *, candidate_id, data):
        return candidate_reject(
            tenant=self.tenant,
            candidate_id=candidate_id,
            version=data["version"],
            note=data["reason"],
            reason_label=data["reason_label"],
            actor=self.actor,
        )


class ReviewDeferApi(ReviewDecisionApi):
    """POST /api/v1/review/candidates/{id}/defer — hand it to the subject to confirm."""

    def decide(self, *, candidate_id, data):
        return candidate_defer(
            tenant=self.tenant, candidate_id=candidate_id, version=data["version"], note=data["reason"], actor=self.actor
        )


def _document(view, summary: str) -> None:
    """The OpenAPI entry of a decision endpoint (after the class: it names the nested serializer)."""
    extend_schema_view(
        post=extend_schema(
            request=view.InputSerializer,
            # 409: the version is stale, or the candidate was already decided
            responses={200: ReviewCandidateSerializer, 409: ApiErrorSerializer},
            summary=summary,
        )
    )(view)


_document(ReviewApproveApi, "Approve (or edit, then approve) a candidate; 409 if the version is stale")
_document(ReviewRejectApi, "Reject a candidate with a reason; 409 if the version is stale")
_document(ReviewDeferApi, "Defer a candidate to the subject; 409 if the version is stale")
