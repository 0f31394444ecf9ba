"""Every question set the course ships, graded and released, opens for every student.

#68: `a1-multinode` and `a4-serving` answered 500 to all 40 students once released — their
worked solutions called the calculator with the raw `model=` / `gpu=` parameters that grading
resolves. The worked solution now goes through grading's own functions, and a bank whose
worked solution cannot be computed is refused when it loads.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.test import Client
from rest_framework.test import APIClient

from apps.autograder.bank import BANKS, BankError, bank_load
from apps.autograder.banklint import bank_problems
from apps.autograder.models import QuestionSet
from apps.autograder.passes import release, run_create
from apps.core.models import Membership, Role

pytestmark = pytest.mark.django_db


def test_every_released_shipped_set_opens_for_every_student(
    ee290_demo, celery_eager, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    course = ee290_demo
    staff = Membership.objects.get(course=course, role=Role.INSTRUCTOR).user
    students = [
        m.user
        for m in Membership.objects.filter(course=course, role=Role.STUDENT).select_related("user")
    ]
    assert len(students) == 40
    sets = list(QuestionSet.objects.filter(course=course).order_by("key"))
    assert {s.key for s in sets} >= {"a1-multinode", "a4-serving"}
    assert len(sets) == len(list(BANKS.glob("*.yaml")))
    for qs in sets:
        with django_capture_on_commit_callbacks(execute=True):
            run_create(actor=staff, question_set=qs)
        release(actor=staff, question_set=qs)
    failures = []
    api, page = APIClient(), Client()
    for student in students:
        api.force_authenticate(student)
        page.force_login(student)
        for qs in sets:
            r = api.get(f"/api/v1/courses/{course.code}/question-sets/{qs.key}/mine/")
            if r.status_code != 200:
                failures.append(f"{student.email} mine/ {qs.key} → {r.status_code}")
                continue
            numeric = [q for q in r.json()["questions"] if q["parts"]]
            assert all(q.get("worked_solution") for q in numeric), (qs.key, student.email)
        for qs in sets[:: max(1, len(students) // 10)] if student != students[0] else sets:
            r = page.get(f"/c/{course.code}/questions/{qs.key}/")
            if r.status_code != 200:
                failures.append(f"{student.email} set page {qs.key} → {r.status_code}")
    r = page.get(f"/c/{course.code}/questions/")
    assert r.status_code == 200
    assert failures == [], failures[:10]
    # The worked solution of a model question names the model's numbers, as grading used them.
    page.force_login(students[0])
    body = page.get(f"/c/{course.code}/questions/a4-serving/").content.decode()
    assert "Worked solution" in body


def _raw(formula: Any) -> Any:
    return lambda **kw: formula(**kw)


def test_a_worked_solution_that_resolves_parameters_its_own_way_is_refused_at_load(
    monkeypatch,
) -> None:  # type: ignore[no-untyped-def]
    """The #68 fault planted again: worked solutions calling the calculator's formulas with the
    raw parameters (model=…, gpu=…) rather than through grading's functions. The bank load
    check names every question it breaks, so such a bank never reaches a student."""
    from apps.autograder import rules
    from apps.perfcalc.calc.registry import all_formulas

    graded = rules._calc_functions

    def raw_calls(*, results: bool = False) -> dict[str, object]:
        funcs = graded(results=results)
        if results:
            funcs |= {n.replace("-", "_"): _raw(f) for n, f in all_formulas().items()}
        return funcs

    monkeypatch.setattr(rules, "_calc_functions", raw_calls)
    for bank, broken in (
        ("a1-multinode", {"zero", "activations"}),
        ("a4-serving", {"max-batch", "tpot"}),
    ):
        spec = yaml.safe_load((BANKS / f"{bank}.yaml").read_text(encoding="utf-8"))
        problems = bank_problems(spec)
        named = {p.split(":")[0] for p in problems if "worked solution" in p}
        assert named == broken, problems


def test_a_prompt_naming_a_parameter_the_question_lacks_is_refused(ee290, tmp_path) -> None:  # type: ignore[no-untyped-def]
    spec = yaml.safe_load((BANKS / "a4-serving.yaml").read_text(encoding="utf-8"))
    spec["questions"][0]["prompt"] = "{model} on {gpus} GPUs: the largest batch that fits?"
    assert any(
        p.startswith(f"{spec['questions'][0]['key']}: its prompt names 'gpus'")
        for p in bank_problems(spec)
    ), bank_problems(spec)
    path = tmp_path / "a4-serving.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    with pytest.raises(BankError):
        bank_load(course=ee290, path=path)
    assert not QuestionSet.objects.filter(course=ee290, key=spec["key"]).exists()


def test_the_start_up_check_names_a_shipped_bank_that_would_be_refused(
    monkeypatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    from apps.autograder import bank
    from apps.autograder.checks import shipped_banks_load

    assert shipped_banks_load() == []
    spec = yaml.safe_load((BANKS / "a1-multinode.yaml").read_text(encoding="utf-8"))
    spec["questions"][0]["parts"][0]["answer"] = "sharded_memory(model=model, gpu='no-such')"
    (tmp_path / "a1-multinode.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    monkeypatch.setattr(bank, "BANKS", tmp_path)
    errors = shipped_banks_load()
    assert errors
    assert all(e.id == "autograder.E001" for e in errors)
    assert errors[0].msg.startswith("a1-multinode.yaml: ")


@pytest.mark.parametrize("path", sorted(BANKS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_shipped_bank_passes_the_load_check(path) -> None:  # type: ignore[no-untyped-def]
    assert bank_problems(yaml.safe_load(path.read_text(encoding="utf-8"))) == []
