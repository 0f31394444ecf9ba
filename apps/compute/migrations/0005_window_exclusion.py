"""No two approved windows may use one node at overlapping times, held by PostgreSQL.

An exclusion constraint over (node, [starts_at, ends_at)) for active rows; half-open ranges, so
back-to-back windows are fine. Needs the btree_gist extension (for `node_id WITH =`). SQLite has
no such constraint; the service makes the same check there.
"""

from django.db import migrations

FORWARD = """
CREATE EXTENSION IF NOT EXISTS btree_gist;
ALTER TABLE compute_windownode ADD CONSTRAINT window_node_no_overlap
  EXCLUDE USING gist (node_id WITH =, tstzrange(starts_at, ends_at, '[)') WITH &&)
  WHERE (active);
"""
BACKWARD = "ALTER TABLE compute_windownode DROP CONSTRAINT IF EXISTS window_node_no_overlap;"


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FORWARD, params=None)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(BACKWARD, params=None)


class Migration(migrations.Migration):
    dependencies = [("compute", "0004_sharing_windows")]
    operations = [migrations.RunPython(forward, backward)]
