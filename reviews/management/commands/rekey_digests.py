"""manage.py rekey_digests: re-key stored fact digests under the current MEMORY_DIGEST_KEY.

For an install whose digests were made under another key (before MEMORY_DIGEST_KEY
existed they were keyed with DJANGO_SECRET_KEY; or after a digest key rotation): list
that key in MEMORY_DIGEST_OLD_KEYS, set the new MEMORY_DIGEST_KEY, run this once. Facts
hold their value, so their digests are recomputed; refused values keep only a digest and
are matched through the old keys, as are the audit chain's digests (which its hashes
cover, so they never change). Idempotent; prints how many rows changed.
"""
from django.core.management.base import BaseCommand
from django.db import transaction

from reviews.models import Fact
from reviews.policy.normalize import value_digest

BATCH = 2000


class Command(BaseCommand):
    help = "Re-key stored fact value digests under the current MEMORY_DIGEST_KEY."

    def handle(self, *args, **options):
        changed, last = 0, 0
        while True:
            with transaction.atomic():
                rows = list(
                    Fact.objects.select_for_update()
                    .filter(pk__gt=last)
                    .exclude(value="")
                    .order_by("pk")
                    .only("pk", "value", "value_digest")[:BATCH]
                )
                if not rows:
                    break
                stale = [row for row in rows if row.value_digest != value_digest(row.value)]
                for row in stale:
                    row.value_digest = value_digest(row.value)
                Fact.objects.bulk_update(stale, ["value_digest"])
            changed += len(stale)
            last = rows[-1].pk
        self.stdout.write(f"{changed} fact digest(s) re-keyed under the current key.")
