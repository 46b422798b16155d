from django.core.management.base import BaseCommand

from reviews.recall.partitions import (
    RECALL_PARTITIONS_AHEAD_DAYS,
    partitioned,
    recall_partitions_drop_expired,
    recall_partitions_ensure,
)


class Command(BaseCommand):
    help = (
        "Recall records' daily partitions (PostgreSQL; also run hourly by the Celery beat): drop the "
        "days past MEMORY_RECALL_RETENTION_DAYS, make today's and the days ahead."
    )

    def add_arguments(self, parser):
        parser.add_argument("--ahead", type=int, default=RECALL_PARTITIONS_AHEAD_DAYS, help="Days ahead to make.")
        parser.add_argument("--keep", action="store_true", help="Make partitions only; drop nothing.")

    def handle(self, *args, ahead, keep, **options):
        if not partitioned():
            self.stdout.write("recall records are one plain table here (not PostgreSQL): nothing to do")
            return
        dropped = [] if keep else recall_partitions_drop_expired()
        created = recall_partitions_ensure(ahead_days=ahead)
        self.stdout.write(f"dropped {len(dropped)} partitions{': ' + ', '.join(dropped) if dropped else ''}; "
                          f"made {len(created)}{': ' + ', '.join(created) if created else ''}")
