"""Labs API: the labs, a lab with my record (students) or its per-step summary (staff), and the
three step actions: lock a prediction (409 the second time), run the instrument (409 before the
lock), submit the reflection (409 before the instrument ran)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api.helpers import api_course, error_responses
from apps.core.permissions import is_staff
from apps.core.timefmt import format_instant, to_course_tz
from apps.labs import services
from apps.labs.labfile import Lab
from apps.labs.models import LabRecord, StepRecord
from apps.labs.selectors import lab_rows

E = error_responses(
    e409="Already locked, the instrument before the lock, or the reflection before the run."
)
TAGS = ["labs"]


def _lab(lab: Lab) -> dict[str, Any]:
    return {
        "key": lab.key,
        "title": lab.title,
        "summary": lab.summary,
        "contexts": lab.contexts,
        "steps": [
            {
                "number": s.number,
                "act": s.act,
                "title": s.title,
                "prediction": {
                    "kind": s.kind,
                    "prompt": s.prompt,
                    "unit": s.unit,
                    "options": [{"key": o.key, "text": o.text} for o in s.options],
                },
                "instrument": {
                    "model": s.model,
                    "inputs": [
                        {
                            "key": i.key,
                            "label": i.label,
                            "kind": i.kind,
                            "default": s.defaults.get(i.key),
                        }
                        for i in s.inputs
                    ],
                },
                "reflection": {
                    "prompt": s.reflection_prompt,
                    "options": [{"key": o.key, "text": o.text} for o in s.reflection_options],
                    "text": s.reflection_text,
                },
            }
            for s in lab.steps
        ],
    }


def _row(lab: Lab, r: StepRecord) -> dict[str, Any]:
    step = lab.steps[r.number - 1]
    return {
        "number": r.number,
        "prediction": r.choice or r.value,
        "locked_at": r.locked_at.isoformat(),
        "inputs": r.inputs,
        "figures": r.figures,
        "reveal": services.reveal(step, r) if r.ran_at else None,
        "reflection_choice": r.reflection_choice,
        "reflection_text": r.reflection_text,
        "submitted_at": r.submitted_at.isoformat() if r.submitted_at else None,
    }


class LabListItemSerializer(serializers.Serializer):
    key = serializers.SlugField()
    title = serializers.CharField()
    steps = serializers.IntegerField(help_text="How many steps the lab has.")
    summary = serializers.CharField()
    timezone = serializers.CharField(help_text="The course's zone, which every time is given in.")
    opens_at = serializers.DateTimeField(
        allow_null=True, help_text="Its window's start, ISO 8601 in course time (null: always)."
    )
    closes_at = serializers.DateTimeField(allow_null=True, help_text="Its window's end.")
    opens_text = serializers.CharField(allow_null=True, help_text="`opens_at` as the page says.")
    closes_text = serializers.CharField(allow_null=True, help_text="`closes_at` as the page says.")
    steps_done = serializers.IntegerField(
        allow_null=True, help_text="A student's submitted steps (staff: null)."
    )
    completed_at = serializers.DateTimeField(
        allow_null=True, help_text="When the student completed it (staff: null)."
    )
    completed_text = serializers.CharField(allow_null=True, help_text="`completed_at`, as shown.")
    started = serializers.IntegerField(
        allow_null=True, help_text="Staff: students who started it (students: null)."
    )
    completed = serializers.IntegerField(
        allow_null=True, help_text="Staff: students who completed it (students: null)."
    )


def _when(value: dt.datetime | None, zone: str) -> tuple[str | None, str | None]:
    if value is None:
        return None, None
    return to_course_tz(value, zone).isoformat(), format_instant(value, zone)


def lab_item(row: dict[str, Any], zone: str, *, staff: bool) -> dict[str, Any]:
    """One lab of the list, from the same row the page renders."""
    lab, w, record = row["lab"], row["w"], row.get("record")
    opens, opens_text = _when(w.opens_at if w else None, zone)
    closes, closes_text = _when(w.closes_at if w else None, zone)
    completed, completed_text = _when(record.completed_at if record else None, zone)
    return {
        "key": lab.key,
        "title": lab.title,
        "steps": len(lab.steps),
        "summary": lab.summary,
        "timezone": zone,
        "opens_at": opens,
        "closes_at": closes,
        "opens_text": opens_text,
        "closes_text": closes_text,
        "steps_done": None if staff else row["submitted"],
        "completed_at": completed,
        "completed_text": completed_text,
        "started": row["started"] if staff else None,
        "completed": row["done"] if staff else None,
    }


class LabsView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="The course's labs, as the list page shows them",
        description="Each lab with its window (ISO 8601 in the course's zone, and as the page "
        "writes it); a student's steps done and completion; staff: how many started and "
        "completed it.",
        operation_id="courses_labs_list",
        responses={200: LabListItemSerializer(many=True), **E},
    )
    def get(self, request: Request, code: str) -> Response:
        user, course = api_course(request, code)
        staff = is_staff(user, course)
        return Response(
            [
                lab_item(row, course.timezone, staff=staff)
                for row in lab_rows(course=course, user=user)
            ]
        )


class LabView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="A lab: its steps and my record (students) or per-step counts (staff)",
        operation_id="courses_lab_retrieve",
        responses={200: dict, **E},
    )
    def get(self, request: Request, code: str, lab: str) -> Response:
        user, course = api_course(request, code)
        the_lab = services.lab_get(course, lab)
        body = _lab(the_lab)
        rows = StepRecord.objects.filter(record__course=course, record__lab_key=the_lab.key)
        if is_staff(user, course):
            locked = Counter(rows.values_list("number", flat=True))
            submitted = Counter(
                rows.filter(submitted_at__isnull=False).values_list("number", flat=True)
            )
            body["summary"] = [
                {"number": s.number, "locked": locked[s.number], "submitted": submitted[s.number]}
                for s in the_lab.steps
            ]
            body["completed"] = LabRecord.objects.filter(
                course=course, lab_key=the_lab.key, completed_at__isnull=False
            ).count()
        else:
            rec = LabRecord.objects.filter(course=course, lab_key=the_lab.key, student=user).first()
            body["record"] = {
                "context": rec.context if rec else "batch",
                "completed_at": rec.completed_at.isoformat() if rec and rec.completed_at else None,
                "steps": [_row(the_lab, r) for r in rows.filter(record__student=user)],
            }
        return Response(body)


class LabLockSerializer(serializers.Serializer):
    prediction = serializers.CharField(
        max_length=40, help_text="An option key (A–D) or a number in the step's unit."
    )


class LockView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Lock my prediction for a step (once; 409 the second time)",
        request=LabLockSerializer,
        responses={201: dict, **E},
    )
    def post(self, request: Request, code: str, lab: str, number: int) -> Response:
        user, course = api_course(request, code, student=True)
        s = LabLockSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        row = services.lock(
            actor=user,
            course=course,
            key=lab,
            number=number,
            prediction=s.validated_data["prediction"],
        )
        return Response(_row(services.lab_get(course, lab), row), status=201)


class LabInstrumentSerializer(serializers.Serializer):
    inputs = serializers.DictField(
        required=False, default=dict, help_text="The instrument's inputs; missing ones default."
    )


class InstrumentView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Run the step's instrument (409 before my prediction is locked)",
        request=LabInstrumentSerializer,
        responses={200: dict, **E},
    )
    def post(self, request: Request, code: str, lab: str, number: int) -> Response:
        user, course = api_course(request, code, student=True)
        s = LabInstrumentSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        figures = services.run(
            actor=user, course=course, key=lab, number=number, inputs=s.validated_data["inputs"]
        )
        return Response(figures)


class LabSubmitSerializer(serializers.Serializer):
    reflection_choice = serializers.CharField(
        max_length=8, required=False, default="", allow_blank=True
    )
    reflection_text = serializers.CharField(
        max_length=2000, required=False, default="", allow_blank=True
    )


class SubmitView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Submit my reflection; the step is done (409 before the instrument ran)",
        request=LabSubmitSerializer,
        responses={200: dict, **E},
    )
    def post(self, request: Request, code: str, lab: str, number: int) -> Response:
        user, course = api_course(request, code, student=True)
        s = LabSubmitSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        row = services.submit(
            actor=user,
            course=course,
            key=lab,
            number=number,
            choice=s.validated_data["reflection_choice"],
            text=s.validated_data["reflection_text"],
        )
        return Response(_row(services.lab_get(course, lab), row))
