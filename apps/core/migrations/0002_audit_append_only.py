"""On PostgreSQL the database itself refuses UPDATE and DELETE of audit rows.

TRUNCATE (used by test flushes) is statement-level and not affected. SQLite has no such trigger
language worth the trouble; AuditEvent.save() refuses updates there too.
"""

from django.db import migrations

FORWARD = """
CREATE OR REPLACE FUNCTION core_auditevent_append_only() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'audit events are append-only (% refused)', TG_OP
    USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER core_auditevent_append_only
  BEFORE UPDATE OR DELETE ON core_auditevent
  FOR EACH ROW EXECUTE FUNCTION core_auditevent_append_only();
"""
BACKWARD = """
DROP TRIGGER IF EXISTS core_auditevent_append_only ON core_auditevent;
DROP FUNCTION IF EXISTS core_auditevent_append_only();
"""


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FORWARD, params=None)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(BACKWARD, params=None)


class Migration(migrations.Migration):
    dependencies = [("core", "0001_initial")]
    operations = [migrations.RunPython(forward, backward)]
