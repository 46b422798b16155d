"""Fact gains the ``contested`` state (SPEC §1).

A contested fact used to be stored as ``deleted`` with its value kept, found again through
the open candidate flagged ``contested`` that points at it. Those rows become
``contested``; every other row keeps its state.
"""
from django.db import migrations, models

OPEN = ("pending_review", "pending_user")


def contested_from_deleted(apps, schema_editor):
    Candidate = apps.get_model("reviews", "Candidate")
    Fact = apps.get_model("reviews", "Fact")
    contests = Candidate.objects.filter(status__in=OPEN, conflict_fact__isnull=False).values_list(
        "conflict_fact_id", "flags"
    )
    fact_ids = {fact_id for fact_id, flags in contests if "contested" in (flags or [])}
    Fact.objects.filter(pk__in=fact_ids, status="deleted").exclude(value="").update(status="contested")


def deleted_from_contested(apps, schema_editor):
    apps.get_model("reviews", "Fact").objects.filter(status="contested").update(status="deleted")


class Migration(migrations.Migration):

    dependencies = [
        ("reviews", "0009_recall_records_partitioned_by_day"),
    ]

    operations = [
        migrations.AlterField(
            model_name="fact",
            name="status",
            field=models.CharField(
                choices=[
                    ("active", "active"),
                    ("contested", "contested"),
                    ("deleted", "deleted"),
                    ("expired", "expired"),
                ],
                default="active",
                max_length=10,
            ),
        ),
        migrations.RunPython(contested_from_deleted, deleted_from_contested),
    ]
