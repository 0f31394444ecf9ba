"""The "inside its own transaction" guard, as production meets it.

pytest-django wraps every test in an atomic block; a guard that reads `in_atomic_block` alone is
always satisfied under test, so services that audited after their own block had closed passed
the suite and answered 500 on a real server (regrade requests, token revokes). These tests hold
the guard to the application's own blocks, and hold every audited write to that rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.db import transaction
from rest_framework.test import APIClient

from apps.core.models import ApiToken, AuditEvent
from apps.core.services import audit_record
from apps.core.tokens import MAX_LIVE, token_create
from apps.core.transactions import in_own_transaction
from tests.factories import CourseFactory, UserFactory
from tests.threads import run_at_once

APPS = Path(__file__).resolve().parents[2] / "apps"


@pytest.mark.django_db
def test_the_test_case_wrapper_is_not_the_services_transaction() -> None:
    assert transaction.get_connection().in_atomic_block  # pytest-django's wrapper is open …
    assert not in_own_transaction()  # … and does not count
    with pytest.raises(RuntimeError, match="inside the service's transaction"):
        audit_record(actor=None, action="test.late")
    with transaction.atomic():
        assert in_own_transaction()
        audit_record(actor=None, action="test.inside")
    assert AuditEvent.objects.filter(action="test.inside").count() == 1


def _is_atomic(expr: ast.expr) -> bool:
    target = expr.func if isinstance(expr, ast.Call) else expr
    return (isinstance(target, ast.Attribute) and target.attr == "atomic") or (
        isinstance(target, ast.Name) and target.id == "atomic"
    )


def _guarded(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The function is `@transaction.atomic` or `@in_callers_transaction` (refuses to write
    outside its caller's transaction)."""
    return any(
        _is_atomic(d) or (isinstance(d, ast.Name) and d.id == "in_callers_transaction")
        for d in fn.decorator_list
    )


def _late_audits(path: Path) -> list[str]:
    """Every `audit_record(…)` in the file that is neither inside a `with …atomic()` block nor in
    a function marked `@in_callers_transaction` (it refuses to run outside one before it writes)."""
    found: list[str] = []

    def walk(node: ast.AST, covered: bool, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inside, name = covered, where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = child.name
                inside = _guarded(child)
            elif isinstance(child, ast.With | ast.AsyncWith) and any(
                _is_atomic(item.context_expr) for item in child.items
            ):
                inside = True
            elif isinstance(child, ast.Call):
                func = child.func
                called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if called == "audit_record" and not inside:
                    found.append(f"{path.relative_to(APPS.parent)}:{child.lineno} in {name}()")
            walk(child, inside, name)

    walk(ast.parse(path.read_text()), False, "<module>")
    return found


def test_every_audited_write_runs_inside_its_own_transaction() -> None:
    files = [p for p in APPS.rglob("*.py") if "migrations" not in p.parts]
    calls = sum(p.read_text().count("audit_record(") for p in files)
    assert calls > 100  # the scan reads the real services, not an empty folder
    late = [line for p in files for line in _late_audits(p)]
    assert late == [], "audit_record outside the service's own transaction:\n" + "\n".join(late)


def test_the_scan_catches_an_audit_after_the_block_closes(tmp_path: Path) -> None:
    planted = APPS / "_planted_late_audit.py"
    planted.write_text(
        "from django.db import transaction\n"
        "def thing_do():\n"
        "    with transaction.atomic():\n"
        "        pass\n"
        "    audit_record(actor=None, action='x')\n"
    )
    try:
        assert _late_audits(planted) == ["apps/_planted_late_audit.py:5 in thing_do()"]
    finally:
        planted.unlink()


@pytest.mark.django_db
def test_revoking_a_token_answers_204_and_writes_its_audit_row() -> None:
    user = UserFactory()
    token, key = token_create(user=user, name="laptop")
    client = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.delete(f"/api/v1/auth/tokens/{token.pk}/").status_code == 204
    assert AuditEvent.objects.filter(action="api_token.revoked", object_id=str(token.pk)).exists()
    assert client.get("/api/v1/me/").status_code == 401


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_sixty_token_creations_at_once_leave_fifty_live() -> None:
    user = UserFactory()
    CourseFactory()
    results = run_at_once([lambda i=i: token_create(user=user, name=f"c{i}") for i in range(60)])
    assert [r for r in results if isinstance(r, Exception)] == []
    assert ApiToken.objects.filter(user=user, revoked_at__isnull=True).count() == MAX_LIVE


@pytest.mark.django_db
def test_a_helper_that_writes_for_its_caller_refuses_before_writing_outside_one() -> None:
    from apps.gradebook.lifecycle import carry_group_entries

    with pytest.raises(RuntimeError, match=r"carry_group_entries runs inside its caller's"):
        carry_group_entries(None, 0, "", [])  # type: ignore[arg-type]
