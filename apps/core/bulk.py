"""Rows in sets: an insert or upsert of many rows as one statement per chunk, not one per row.

On PostgreSQL the rows are streamed with `COPY` into a temporary table shaped like the target
and merged with one `INSERT … SELECT … ON CONFLICT (…) DO UPDATE`; the temporary table is
dropped at commit, so the caller's transaction decides whether any of it lands. Elsewhere (the
SQLite of `make run`) the same upsert runs as multi-row `INSERT … ON CONFLICT` statements. Values
are passed as the database stores them: a JSON column takes the JSON text, a foreign key its id.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, models

from apps.core.todaycache import rows_written
from apps.core.transactions import require_own_transaction

SQLITE_ROWS = 400  # SQLite allows 32,766 parameters per statement; rows × columns stays under it


def _names(model: type[models.Model], fields: Sequence[str]) -> list[str]:
    out = []
    for name in fields:
        f = model._meta.get_field(name)
        if not isinstance(f, models.Field) or not f.column:
            raise ValueError(f"{model.__name__}.{name} is not a column")
        out.append(f.column)
    return out


def _copy(cursor: Any, table: str, col_sql: str, rows: Iterable[Sequence[Any]]) -> int:
    """Stream `rows` into `table` with PostgreSQL's COPY; how many were written."""
    n = 0
    with cursor.cursor.copy(f"COPY {table} ({col_sql}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
            n += 1
    return n


def _multirow(
    cursor: Any, table: str, col_sql: str, width: int, rows: Iterable[Sequence[Any]], tail: str
) -> int:
    """The same rows as multi-row `INSERT … VALUES (…), (…) <tail>` statements (SQLite)."""
    n = 0
    it = iter(rows)
    row_sql = "(" + ", ".join(["%s"] * width) + ")"
    while batch := list(itertools.islice(it, SQLITE_ROWS)):
        cursor.execute(
            f"INSERT INTO {table} ({col_sql}) VALUES "  # noqa: S608 - values are parameters
            f"{', '.join([row_sql] * len(batch))} {tail}",
            [v for row in batch for v in row],
        )
        n += len(batch)
    return n


def _in_transaction(what: str) -> None:
    require_own_transaction(f"bulk.{what} runs inside the caller's transaction")


def insert(model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
    """Append `rows` (tuples in the order of `fields`) to `model`'s table: `COPY` straight into
    it on PostgreSQL, multi-row `INSERT`s elsewhere. A row that breaks a constraint fails the
    whole statement (IntegrityError), so use it where the caller's lock already rules repeats
    out. Returns the rows given."""
    _in_transaction("insert")
    rows_written(model)
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    col_sql = ", ".join(quote(c) for c in _names(model, fields))
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            return _copy(cursor, table, col_sql, rows)
        return _multirow(cursor, table, col_sql, len(fields), rows, "")


def upsert(
    model: type[models.Model],
    fields: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    unique: Sequence[str],
    update: Sequence[str],
) -> int:
    """Insert `rows` (tuples in the order of `fields`) into `model`'s table; a row whose `unique`
    fields match an existing row updates that row's `update` fields instead. Returns the rows
    given. Must run inside a transaction (it is the caller's unit of work); `rows` must not repeat
    a `unique` key (PostgreSQL refuses to update one row twice in a statement)."""
    _in_transaction("upsert")
    rows_written(model)
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    col_sql = ", ".join(quote(c) for c in _names(model, fields))
    keys = ", ".join(quote(c) for c in _names(model, unique))
    sets = ", ".join(f"{quote(c)} = EXCLUDED.{quote(c)}" for c in _names(model, update))
    conflict = f"ON CONFLICT ({keys}) " + (f"DO UPDATE SET {sets}" if sets else "DO NOTHING")
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            return _multirow(cursor, table, col_sql, len(fields), rows, conflict)
        staging = quote(f"_bulk_{model._meta.db_table}")
        # Only the columns given, with the target's types and no constraints or defaults (an
        # identity column would draw from the target's sequence for every staged row).
        cursor.execute(f"DROP TABLE IF EXISTS {staging}")
        cursor.execute(
            f"CREATE TEMP TABLE {staging} ON COMMIT DROP AS "  # noqa: S608 - names from the model
            f"SELECT {col_sql} FROM {table} WITH NO DATA"
        )
        n = _copy(cursor, staging, col_sql, rows)
        cursor.execute(
            f"INSERT INTO {table} ({col_sql}) SELECT {col_sql} FROM {staging} {conflict}"  # noqa: S608 - names from the model
        )
        return n
