"""Contests closed before the ``contested`` state existed keep no value on the fact (SPEC §1).

Before 0010 a contested fact was stored ``deleted`` with its value kept. A contest that a
reviewer then rejected, or that a newer value superseded, left the fact so: ``deleted``, still
showing its value. Closing a contest today (``services.facts.contests_closed``, the
``FACT_DELETE`` transition) empties the fact's value and evidence, and the value stays in the
fact's versions as history. This applies that rule to the rows closed before, and only where
nothing is lost: the fact is ``deleted``, a closed (rejected or superseded) candidate flagged
``contested`` points at it, and its latest version holds the value it still shows.

The status does not change, so there is no transition and no audit event: the chain already
holds the contest and the decision that closed it, and a migration does not append to it.
Reversing does nothing: the values are still in the versions.
"""
from django.db import migrations

CLOSED = ("rejected", "superseded")


def closed_contests_emptied(apps, schema_editor):
    Candidate = apps.get_model("reviews", "Candidate")
    Fact = apps.get_model("reviews", "Fact")
    FactVersion = apps.get_model("reviews", "FactVersion")
    closed = Candidate.objects.filter(status__in=CLOSED, conflict_fact__isnull=False).values_list(
        "conflict_fact_id", "flags"
    )
    fact_ids = {fact_id for fact_id, flags in closed if "contested" in (flags or [])}
    emptied = []
    for fact in Fact.objects.filter(pk__in=fact_ids, status="deleted").exclude(value="").only("pk", "value"):
        latest = FactVersion.objects.filter(fact_id=fact.pk).order_by("-version").values_list("value", flat=True).first()
        if latest == fact.value:
            emptied.append(fact.pk)
    Fact.objects.filter(pk__in=emptied).update(value="", evidence="")


class Migration(migrations.Migration):

    dependencies = [
        ("reviews", "0012_message_extraction_record"),
    ]

    operations = [
        migrations.RunPython(closed_contests_emptied, migrations.RunPython.noop),
    ]
