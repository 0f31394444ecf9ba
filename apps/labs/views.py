"""Lab pages. A student works through a lab one step at a time: lock a prediction, then the
instrument opens pre-filled, the reveal compares, the reflection closes the step. Staff see, per
step, the class's locked predictions against the true value, the reflections and completion,
and download every record as CSV. Changes post to one action view each."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from apps.autograder.models import QuestionSet
from apps.core.csvexport import csv_response
from apps.core.http import AuthedRequest
from apps.core.models import Course, Membership, Role
from apps.core.permissions import is_staff
from apps.core.views_helpers import course_action, course_for, errors_as_messages, form_kept
from apps.labs import charts, services
from apps.labs.labfile import Lab
from apps.labs.models import CourseLab, LabRecord, StepRecord
from apps.labs.selectors import lab_rows


@login_required
@require_GET
def labs_page(request: AuthedRequest, code: str) -> HttpResponseBase:
    course = course_for(request, code)
    rows = lab_rows(course=course, user=request.user)
    return render(
        request,
        "labs/list.html",
        {"course": course, "rows": rows, "staff": is_staff(request.user, course)},
    )


@login_required
@require_GET
def lab_page(request: AuthedRequest, code: str, lab: str) -> HttpResponseBase:
    course = course_for(request, code)
    the_lab = services.lab_get(course, lab)
    if is_staff(request.user, course):
        if request.GET.get("format") == "csv":
            return _csv(course, the_lab)
        return _staff(request, course, the_lab)
    rows = {
        s.number: s
        for s in StepRecord.objects.filter(
            record__course=course, record__lab_key=the_lab.key, record__student=request.user
        )
    }
    record = LabRecord.objects.filter(
        course=course, lab_key=the_lab.key, student=request.user
    ).first()
    steps = []
    for step in the_lab.steps:
        row = rows.get(step.number)
        previous_done = step.number == 1 or (
            rows.get(step.number - 1) is not None and rows[step.number - 1].submitted_at
        )
        figures = row.figures if row and row.ran_at else None
        steps.append(
            {
                "step": step,
                "row": row,
                "open": bool(previous_done),
                "inputs": [
                    {
                        "input": i,
                        "value": (row.inputs if row and row.inputs else step.defaults).get(i.key),
                        "choices": step.choices_for(i.key),
                    }
                    for i in step.inputs
                ],
                "figures": figures,
                "picture": mark_safe(
                    charts.profile_svg(figures["before"], figures["after"], step.labels)
                )
                if figures and "before" in figures
                else "",
                "reveal": services.reveal(step, row) if row and row.ran_at else None,
                "refused": form_kept(request, f"lock-{step.number}"),  # tied to its field
            }
        )
    window = CourseLab.objects.filter(course=course, lab_key=the_lab.key).first()
    return render(
        request,
        "labs/lab.html",
        {
            "course": course,
            "lab": the_lab,
            "steps": steps,
            "record": record,
            "window": window,
            "bank": _bank(course, the_lab),
        },
    )


def _bank(course: Course, lab: Lab) -> Any:
    """The course's question set with the lab's numbers, when it has loaded it."""
    if not lab.bank:
        return None
    return QuestionSet.objects.filter(course=course, key=lab.bank).first()


def _staff(request: AuthedRequest, course: Course, lab: Lab) -> HttpResponseBase:
    rows = list(
        StepRecord.objects.filter(record__course=course, record__lab_key=lab.key).values(
            "number", "choice", "value", "reflection_choice", "reflection_text", "submitted_at"
        )
    )
    students = Membership.objects.filter(course=course, role=Role.STUDENT, is_active=True).count()
    per_step = []
    for step in lab.steps:
        mine = [r for r in rows if r["number"] == step.number]
        values = [r["value"] for r in mine if r["value"] is not None]
        if step.kind == "choice":
            chosen = Counter(r["choice"] for r in mine)
            right = str(step.answer)
            table = [
                (o.key + (" (right)" if o.key == right else ""), chosen.get(o.key, 0))
                for o in step.options
            ]
            picture = charts.choices_svg(
                chosen,
                [o.key for o in step.options],
                str(step.answer),
                f"Step {step.number}: locked predictions",
            )
        else:
            table = [
                (f"{a:.3g} – {b:.3g}", n)
                for a, b, n in charts.histogram_bins(values, float(step.answer))
            ]
            picture = charts.histogram_svg(
                values,
                float(step.answer),
                step.unit,
                f"Step {step.number}: locked predictions against the true value",
            )
        texts = [r["reflection_text"] for r in mine if r["reflection_text"]]
        per_step.append(
            {
                "step": step,
                "locked": len(mine),
                "submitted": sum(1 for r in mine if r["submitted_at"]),
                "picture": mark_safe(picture),
                "table": table,  # the picture's numbers, as text
                "reflections": sorted(
                    Counter(r["reflection_choice"] for r in mine if r["reflection_choice"]).items()
                ),
                "texts": Paginator(texts, 20).get_page(request.GET.get(f"p{step.number}")),
                "param": f"p{step.number}",
            }
        )
    done = LabRecord.objects.filter(
        course=course, lab_key=lab.key, completed_at__isnull=False
    ).count()
    return render(
        request,
        "labs/staff.html",
        {"course": course, "lab": lab, "per_step": per_step, "done": done, "students": students},
    )


def _csv(course: Course, lab: Lab) -> HttpResponseBase:
    header = ["student", "email", "context", "step", "prediction", "truth", "inputs", "figure"]
    header += ["reflection_choice", "reflection_text", "submitted_at"]
    out: list[list[Any]] = []
    for r in (
        StepRecord.objects.filter(record__course=course, record__lab_key=lab.key)
        .select_related("record__student")
        .order_by("record__student__email", "number")
    ):
        step = lab.steps[r.number - 1]
        key_figure = "mfu" if "mfu" in r.figures else "improvement_pct"
        out.append(
            [
                r.record.student.get_full_name(),
                r.record.student.email,
                r.record.context,
                r.number,
                r.choice or r.value,
                step.answer,
                r.inputs,
                r.figures.get(key_figure, ""),
                r.reflection_choice,
                r.reflection_text,
                r.submitted_at.isoformat() if r.submitted_at else "",
            ]
        )
    return csv_response(f"{course.code}-{lab.key}.csv", [header, *out])


def _to(course: Course, lab: str, number: int) -> HttpResponseBase:
    return redirect(f"/c/{course.code}/labs/{lab}/#step-{number}")


@course_action(student=True)
def step_lock(request: AuthedRequest, course: Course, lab: str, number: int) -> HttpResponseBase:
    """Lock the prediction: it cannot change afterwards."""
    with errors_as_messages(
        request, form=f"lock-{number}", field_ids={"prediction": f"pred-{number}"}
    ):
        services.lock(
            actor=request.user,
            course=course,
            key=lab,
            number=number,
            prediction=request.POST.get("prediction", ""),
        )
        messages.success(request, f"Step {number}: prediction locked. The instrument is open.")
    return _to(course, lab, number)


@course_action(student=True)
def step_run(request: AuthedRequest, course: Course, lab: str, number: int) -> HttpResponseBase:
    """Run the step's instrument with the inputs on the form."""
    with errors_as_messages(request):
        inputs = {k: v for k, v in request.POST.items() if k != "csrfmiddlewaretoken"}
        services.run(actor=request.user, course=course, key=lab, number=number, inputs=inputs)
    return _to(course, lab, number)


@course_action(student=True)
def step_submit(request: AuthedRequest, course: Course, lab: str, number: int) -> HttpResponseBase:
    """Save the reflection and close the step."""
    with errors_as_messages(request):
        services.submit(
            actor=request.user,
            course=course,
            key=lab,
            number=number,
            choice=request.POST.get("reflection_choice", ""),
            text=request.POST.get("reflection_text", ""),
        )
        messages.success(request, f"Step {number} saved to your lab record.")
    return _to(course, lab, number + 1)


@course_action(student=True)
def context_choose(request: AuthedRequest, course: Course, lab: str) -> HttpResponseBase:
    """Switch the deployment context the lab is read in."""
    with errors_as_messages(request):
        services.context_set(
            actor=request.user, course=course, key=lab, context=request.POST.get("context", "")
        )
    return redirect(f"/c/{course.code}/labs/{lab}/")
