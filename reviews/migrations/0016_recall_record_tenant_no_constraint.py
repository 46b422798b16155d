"""Recall records: no foreign-key constraint on the tenant (see RecallRecord.tenant).

On PostgreSQL the constraint migration 0009 made on the partitioned table is dropped (its
partitions lose the inherited copies with it; an attached legacy table keeps its own,
which checks only its past rows). On SQLite the table is left as it is.
"""
from django.db import migrations, models


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE reviews_recallrecord DROP CONSTRAINT IF EXISTS reviews_recallrecord_tenant_id_fk")


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "ALTER TABLE reviews_recallrecord ADD CONSTRAINT reviews_recallrecord_tenant_id_fk FOREIGN KEY (tenant_id) "
            "REFERENCES reviews_tenant (id) DEFERRABLE INITIALLY DEFERRED"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0015_candidate_open_claims"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(forwards, backwards, elidable=False)],
            state_operations=[
                migrations.AlterField(
                    model_name="recallrecord",
                    name="tenant",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=models.deletion.CASCADE,
                        related_name="+",
                        to="reviews.tenant",
                    ),
                ),
            ],
        ),
    ]
