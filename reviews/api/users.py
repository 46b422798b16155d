"""A subject's memory for the host application's admin (SPEC §7):

- ``GET /api/v1/users/{user_id}/facts``: every fact, with history;
- ``DELETE /api/v1/users/{user_id}/facts[?thread_id=&entity=&field=]``: precise deletion,
  or without filters the erasure of the subject;
- ``DELETE /api/v1/users/{user_id}/facts/{id}``: one fact.

Every deletion answers with its receipt.
"""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from ..models import Category, FactStatus, MemoryScope, Scope, Sensitivity, Source
from ..services.erasure import fact_erase, facts_delete
from ..selectors.subjects import subject_facts_with_history
from .base import ApiView, StrictSerializer
from .fields import IdentifierField, TextField


class FactVersionSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    value = serializers.CharField(allow_blank=True)
    confidence = serializers.FloatField()
    source = serializers.ChoiceField(choices=Source.choices)
    source_message_id = serializers.CharField(allow_blank=True)
    actor = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


class SubjectFactSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    entity_type = serializers.CharField(source="entity.entity_type")
    entity_id = serializers.CharField(source="entity.entity_id")
    field = serializers.CharField()
    value = serializers.CharField(allow_blank=True, help_text="Empty once deleted or expired.")
    status = serializers.ChoiceField(choices=FactStatus.choices)
    version = serializers.IntegerField()
    confidence = serializers.FloatField()
    category = serializers.ChoiceField(choices=Category.choices)
    sensitivity = serializers.ChoiceField(choices=Sensitivity.choices)
    scope = serializers.ChoiceField(choices=MemoryScope.choices)
    thread_id = serializers.CharField(allow_blank=True)
    source = serializers.ChoiceField(choices=Source.choices)
    source_message_id = serializers.CharField(allow_blank=True)
    approved_by = serializers.CharField(allow_blank=True)
    expires_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    history = FactVersionSerializer(many=True, help_text="Every version, oldest first.")


class DeletedCountsSerializer(serializers.Serializer):
    facts = serializers.IntegerField()
    fact_versions = serializers.IntegerField()
    candidates = serializers.IntegerField()
    messages = serializers.IntegerField()
    recall_records = serializers.IntegerField()
    store_items = serializers.IntegerField()
    embeddings = serializers.IntegerField()
    audit_values = serializers.IntegerField()
    export_files = serializers.IntegerField()
    dry_run_examples = serializers.IntegerField(help_text="Examples quoted in kept extraction dry-run reports.")


class RedactedCountsSerializer(serializers.Serializer):
    messages = serializers.IntegerField()
    candidates = serializers.IntegerField()
    facts = serializers.IntegerField()
    recall_records = serializers.IntegerField()


class ReceiptSerializer(serializers.Serializer):
    """What was deleted, where, and when (SPEC §4)."""

    deleted = DeletedCountsSerializer()
    redacted = RedactedCountsSerializer(help_text="Rows kept with the deleted values cut out of their text.")
    scope = serializers.DictField()
    at = serializers.DateTimeField()


class UserFactsApi(ApiView):
    """A subject's facts: read them all (with history), or delete by thread, entity and
    field (filters combine); with no filter, erase the subject entirely."""

    required_scope = Scope.ADMIN

    class ListInputSerializer(StrictSerializer):
        """No parameters."""

    class DeleteInputSerializer(StrictSerializer):
        thread_id = IdentifierField(required=False)
        entity = serializers.RegexField(
            r"^[^:\s]{1,64}:\S.{0,127}$", max_length=193, required=False, help_text="`type:id`"
        )
        field = TextField(max_length=80, required=False)

    class ListOutputSerializer(serializers.Serializer):
        user_id = serializers.CharField()
        facts = SubjectFactSerializer(many=True)

    @extend_schema(
        operation_id="users_facts_list",
        responses={200: ListOutputSerializer},
        summary="Every fact of a subject, with history",
    )
    def get(self, request, user_id: str):
        self.ListInputSerializer(data=request.query_params).is_valid(raise_exception=True)
        facts = subject_facts_with_history(tenant=self.tenant, user_id=user_id)
        return Response(self.ListOutputSerializer({"user_id": user_id, "facts": facts}).data)

    @extend_schema(
        operation_id="users_facts_delete",
        parameters=[DeleteInputSerializer],
        responses={200: ReceiptSerializer},
        summary="Delete a subject's facts by thread, entity or field; without filters, erase the subject",
    )
    def delete(self, request, user_id: str):
        # Strict: a misspelt filter must not fall through to erasing everything.
        serializer = self.DeleteInputSerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        receipt = facts_delete(tenant=self.tenant, user_id=user_id, actor=self.actor, **serializer.validated_data)
        return Response(ReceiptSerializer(receipt.as_dict()).data)


class UserFactDeleteApi(ApiView):
    """Delete one fact of a subject and every copy of its value."""

    required_scope = Scope.ADMIN

    @extend_schema(
        operation_id="users_fact_delete",
        responses={200: ReceiptSerializer},
        summary="Delete one fact of a subject",
    )
    def delete(self, request, user_id: str, fact_id: int):
        UserFactsApi.ListInputSerializer(data=request.query_params).is_valid(raise_exception=True)
        receipt = fact_erase(tenant=self.tenant, fact_id=fact_id, user_id=user_id, actor=self.actor)
        return Response(ReceiptSerializer(receipt.as_dict()).data)
