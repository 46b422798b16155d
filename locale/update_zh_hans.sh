#!/usr/bin/env bash
# Re-extract the project-level catalog (base layout, sign-in, reviewer dashboard, auditor
# and recall pages, export verification, model vocabularies) into locale/zh_Hans and
# compile the .mo that is committed beside it.
#
# The self-service portal keeps its own catalog in reviews/locale; run from the project
# root, makemessages would route every reviews/*.py string there. So extraction runs on a
# copy of just the files this catalog covers, and existing translations are merged in.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
FILES=(
  templates/base.html templates/home.html templates/errors templates/registration templates/reviews
  templates/auditor templates/recall reviews/views/auditor.py reviews/views/recall.py
  reviews/views/reviewer.py reviews/views/stats.py reviews/views/dry_runs.py reviews/templatetags/reviewer_tags.py
  templates/tenant_admin reviews/views/tenant_admin.py reviews/templatetags/tenant_admin_tags.py
  reviews/models/choices.py reviews/models/exports.py reviews/models/quality.py reviews/models/tenancy.py reviews/models/webhooks.py reviews/audit.py reviews/exports.py reviews/services/audit_export.py memory_portal/settings.py
  reviews/web/forms.py reviews/policy/identifiers.py reviews/views/my_decisions.py reviews/views/saved_views.py
)
CATALOG=locale/zh_Hans/LC_MESSAGES/django.po
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for path in "${FILES[@]}"; do
  mkdir -p "$work/$(dirname "$path")"
  cp -r "$path" "$work/$path"
done
mkdir -p "$work/$(dirname "$CATALOG")"
[ -f "$CATALOG" ] && cp "$CATALOG" "$work/$CATALOG"
(cd "$work" && env -u DJANGO_SETTINGS_MODULE "$PYTHON" -m django makemessages -l zh_Hans --no-obsolete --no-wrap)
cp "$work/$CATALOG" "$CATALOG"
msgfmt --check --statistics -o "${CATALOG%.po}.mo" "$CATALOG"
