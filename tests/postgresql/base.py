"""Django's PostgreSQL backend, with the flush between transactional tests done by DELETE.

After each test that commits for real (``transactional_db``, ``live_server``, a
TransactionTestCase) Django empties every table. Its backend does that with one TRUNCATE,
which gives each table, index and TOAST table a new file: a fixed cost per relation, about
a second for this schema's 250 relations on the CI machine, however few rows the test left.
DELETE costs per row, and a test leaves a few hundred: some 20 ms. The foreign keys are
deferred to the commit, when every table is empty; the tables' own triggers (the audit
trail's append-only guard) are switched off inside the flush's transaction, as TRUNCATE
never fires them either.

Only the flush that keeps the sequences is changed: ``manage.py flush`` restarts them (and
keeps TRUNCATE ... RESTART IDENTITY), the tests' flush does not. Selected by tests/settings.py.
"""
from django.db.backends.postgresql import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or allow_cascade or not tables:
            return super().sql_flush(style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        with self.connection.cursor() as cursor:
            cursor.execute(
                "SELECT DISTINCT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "WHERE NOT t.tgisinternal AND c.relname = ANY(%s)",
                [list(tables)],
            )
            guarded = [style.SQL_FIELD(self.quote_name(table)) for table, in cursor.fetchall()]
        keyword, quoted = style.SQL_KEYWORD, [style.SQL_FIELD(self.quote_name(table)) for table in tables]
        return [
            f"{keyword('SET CONSTRAINTS ALL DEFERRED')};",
            *(f"{keyword('ALTER TABLE')} {table} {keyword('DISABLE TRIGGER USER')};" for table in guarded),
            *(f"{keyword('DELETE FROM')} {table};" for table in quoted),
            *(f"{keyword('ALTER TABLE')} {table} {keyword('ENABLE TRIGGER USER')};" for table in guarded),
        ]


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
