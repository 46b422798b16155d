"""Pages: the reviewer dashboard and the subject's self-service portal."""
from django.contrib.auth import views as auth_views
from django.urls import include, path

from .api import converters  # noqa: F401 - registers the path converters
from .views import auditor, dry_runs, home, my_decisions, reviewer, signin, stats, tenant_admin
from .views import recall as recall_views

app_name = "reviews"

urlpatterns = [
    path("", home.home, name="home"),
    path("login/", signin.SignInView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(next_page="reviews:home"), name="logout"),
    path("me/", include("reviews.portal_urls")),
    path("review/", reviewer.queue, name="queue"),
    path("review/counts", reviewer.queue_counts, name="queue-counts"),
    path("review/bulk", reviewer.bulk, name="bulk-decide"),
    path("review/bulk/select", reviewer.bulk_select, name="bulk-select"),
    path("review/claim", reviewer.claim, name="claim"),
    path("review/undo", reviewer.undo_bulk, name="undo-bulk"),
    path("review/stats/", stats.stats, name="stats"),
    path("review/mine/", my_decisions.my_decisions_page, name="my-decisions"),
    path("review/candidates/<int:pk>/", reviewer.candidate_detail, name="candidate"),
    path("review/candidates/<int:pk>/body", reviewer.candidate_body, name="candidate-body"),
    path("review/candidates/<int:pk>/approve", reviewer.approve, name="candidate-approve"),
    path("review/candidates/<int:pk>/reject", reviewer.reject, name="candidate-reject"),
    path("review/candidates/<int:pk>/defer", reviewer.defer, name="candidate-defer"),
    path("review/candidates/<int:pk>/settle", reviewer.settle, name="candidate-settle"),
    path("review/candidates/<int:pk>/undo", reviewer.undo, name="candidate-undo"),
    path("review/dry-runs/", dry_runs.dry_run_list, name="dry-runs"),
    path("review/dry-runs/<int:pk>/", dry_runs.dry_run_detail, name="dry-run"),
    path("review/entities/<int:pk>/", reviewer.entity_detail, name="entity"),
    path("review/entities/<int:pk>/merge", reviewer.entity_merge_view, name="entity-merge"),
    path("audit/", auditor.audit_home, name="audit"),
    path("audit/log/", auditor.audit_log, name="audit-log"),
    path("audit/export", auditor.export_download_now, name="audit-download"),
    path("audit/exports/", auditor.export_start, name="audit-export-start"),
    path("audit/exports/<int:pk>/", auditor.export_detail, name="audit-export"),
    path("audit/exports/<int:pk>/file", auditor.export_file, name="audit-export-file"),
    path("audit/exports/<int:pk>/manifest", auditor.export_manifest, name="audit-export-manifest"),
    path("audit/exports/<int:pk>/again", auditor.export_again, name="audit-export-again"),
    path("audit/verify/", auditor.verify, name="audit-verify"),
    path("tenant/", tenant_admin.console_home, name="tenant-admin"),
    path("tenant/schema/", tenant_admin.schema_page, name="tenant-schema"),
    path("tenant/schema/add", tenant_admin.field_add, name="tenant-field-add"),
    path("tenant/schema/relation-labels", tenant_admin.relation_labels_change, name="tenant-relation-labels"),
    path("tenant/schema/<slug:entity_type>/<str:field_name>", tenant_admin.field_edit, name="tenant-field-edit"),
    path("tenant/policy/", tenant_admin.policy_page, name="tenant-policy"),
    path("tenant/policy/change", tenant_admin.policy_change, name="tenant-policy-change"),
    path("tenant/extractor/", tenant_admin.extractor_page, name="tenant-extractor"),
    path("tenant/extractor/change", tenant_admin.extractor_change, name="tenant-extractor-change"),
    path("tenant/keys/", tenant_admin.keys_page, name="tenant-keys"),
    path("tenant/keys/create", tenant_admin.key_create, name="tenant-key-create"),
    path("tenant/keys/<key_prefix:prefix>/revoke", tenant_admin.key_revoke, name="tenant-key-revoke"),
    path("tenant/keys/<key_prefix:prefix>/rotate", tenant_admin.key_rotate, name="tenant-key-rotate"),
    path("tenant/staff/", tenant_admin.staff_page, name="tenant-staff"),
    path("tenant/staff/add", tenant_admin.staff_add, name="tenant-staff-add"),
    path("tenant/staff/<int:user_id>/role", tenant_admin.staff_role, name="tenant-staff-role"),
    path("tenant/staff/<int:user_id>/remove", tenant_admin.staff_remove, name="tenant-staff-remove"),
    path("audit/recalls/", recall_views.recall_list, name="recalls"),
    path("audit/recalls/<int:pk>/", recall_views.recall_detail, name="recall"),
    path("audit/facts/<int:pk>/", recall_views.fact_recalls, name="fact-recalls"),
]
