from __future__ import annotations

from typing import Any

import numpy as np
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.api.exceptions import ErrorSerializer
from apps.core.models import User
from apps.perfcalc.api.serializers import (
    BatchRequestSerializer,
    BatchResponseSerializer,
    InputErrorSerializer,
    ResultSerializer,
    VectorRequestSerializer,
    VectorResponseSerializer,
    input_serializer,
)
from apps.perfcalc.calc.core import InputError
from apps.perfcalc.calc.evaluate import evaluate
from apps.perfcalc.calc.registry import InputErrors, all_formulas, evaluate_batch
from apps.perfcalc.selectors import gpu_table

MAX_CALLS = 1000
MAX_VECTOR = 1_000_000
BAD = OpenApiResponse(
    InputErrorSerializer, description="Inputs refused; `errors` names each field."
)
AUTH = {401: OpenApiResponse(ErrorSerializer, description="Not logged in.")}


def _errors(exc: InputError) -> dict[str, list[str]]:
    return exc.as_dict() if isinstance(exc, InputErrors) else {exc.field: [exc.message]}


def _bad(exc: InputError) -> Response:
    return Response(
        {"detail": "Some inputs are wrong.", "code": "invalid", "errors": _errors(exc)}, status=400
    )


def _object(data: Any) -> dict[str, Any] | None:
    return data if isinstance(data, dict) else None


class FormulaView(APIView):
    formula_name = ""

    def post(self, request: Request) -> Response:
        data = _object(request.data)
        if data is None:
            return _bad(InputError("__all__", "send a JSON object of inputs"))
        user: User = request.user  # type: ignore[assignment]
        try:
            result = evaluate(self.formula_name, data, gpus=gpu_table(user=user))
        except InputError as exc:
            return _bad(exc)
        return Response(result.as_dict())


def _formula_view(name: str) -> type[FormulaView]:
    f = all_formulas()[name]

    class View(FormulaView):
        formula_name = name

        @extend_schema(
            operation_id=f"perfcalc_{name.replace('-', '_')}",
            summary=f.title,
            description=f"{f.summary}\n\nExample inputs: `{f.example}`",
            request=input_serializer(name),
            responses={200: ResultSerializer, 400: BAD, **AUTH},
            tags=["perfcalc"],
        )
        def post(self, request: Request) -> Response:
            return super().post(request)

    View.__name__ = View.__qualname__ = "".join(p.title() for p in name.split("-")) + "View"
    return View


def formula_views() -> list[tuple[str, Any]]:
    return [(name, _formula_view(name).as_view()) for name in all_formulas()]


class FormulaIndexView(APIView):
    @extend_schema(
        tags=["perfcalc"],
        summary="Every formula with its inputs and units",
        responses={200: OpenApiResponse(description="Formulas by name."), **AUTH},
    )
    def get(self, request: Request) -> Response:
        return Response(
            {
                name: {
                    "title": f.title,
                    "topic": f.topic,
                    "summary": f.summary,
                    "unit": f.result_unit,
                    "uses_gpu": f.uses_gpu,
                    "uses_model": f.uses_model,
                    "model_fields": f.model_fields,
                    "example": f.example,
                    "inputs": [
                        {
                            "name": p.name,
                            "label": p.label,
                            "unit": p.unit,
                            "kind": p.kind,
                            "required": p.required,
                            "default": p.default,
                            "choices": list(p.choices),
                            "help": p.help,
                        }
                        for p in f.params
                    ],
                }
                for name, f in all_formulas().items()
            }
        )


class HardwareView(APIView):
    @extend_schema(
        tags=["perfcalc"],
        summary="GPU catalog (with sources) and your courses' custom profiles",
        responses={200: OpenApiResponse(description="GPUs and links."), **AUTH},
    )
    def get(self, request: Request) -> Response:
        from apps.perfcalc.calc import catalog

        user: User = request.user  # type: ignore[assignment]
        return Response(
            {
                "gpus": [
                    {
                        "key": g.key,
                        "name": g.name,
                        "source": g.source,
                        "custom": g.custom,
                        "memory_bytes": g.memory_bytes,
                        "bandwidth_bytes_per_s": g.bandwidth_bytes_per_s,
                        "tdp_w": g.tdp_w,
                        "peaks_flops_per_s": g.peaks,
                    }
                    for g in gpu_table(user=user).values()
                ],
                "links": [
                    {
                        "key": x.key,
                        "name": x.name,
                        "bandwidth_bytes_per_s": x.bandwidth_bytes_per_s,
                        "direction": x.direction,
                        "source": x.source,
                    }
                    for x in catalog.links().values()
                ],
            }
        )


class ModelsView(APIView):
    @extend_schema(
        tags=["perfcalc"],
        summary="Model catalog: dimensions with their sources",
        responses={200: OpenApiResponse(description="Models by key."), **AUTH},
    )
    def get(self, request: Request) -> Response:
        from apps.perfcalc.calc import catalog

        return Response(
            {
                "models": [
                    {"key": m.key, "name": m.name, "source": m.source, **m.figures}
                    for m in catalog.models().values()
                ]
            }
        )


class PlanView(APIView):
    @extend_schema(
        tags=["perfcalc"],
        summary="Training-step planner: memory per GPU, step time by part, MFU, rank",
        description="Query parameters as on /calc/plan/: model, scale (course: nodes 1–8; "
        "cluster: nodes up to 1,024), nodes, tp, pp, dp, "
        "micro_batch, global_batch, sequence_length, zero_stage (0–3), recompute "
        "(none/selective/full), kernel_efficiency. Missing ones take the page's defaults.",
        parameters=[
            OpenApiParameter(n, str, required=False)
            for n in (
                "model",
                "scale",
                "nodes",
                "tp",
                "pp",
                "dp",
                "micro_batch",
                "global_batch",
                "sequence_length",
                "zero_stage",
                "recompute",
                "kernel_efficiency",
            )
        ],
        responses={200: OpenApiResponse(description="The plan."), 400: BAD, **AUTH},
    )
    def get(self, request: Request) -> Response:
        from apps.perfcalc.calc import plan as planner

        try:
            result = planner.plan({k: v for k, v in request.query_params.items() if v != ""})
        except InputError as exc:
            return _bad(exc)
        return Response(result.as_dict())


class BatchView(APIView):
    @extend_schema(
        tags=["perfcalc"],
        summary="Many calls at once",
        description="Each call answered in order; a bad call reports its field errors and never "
        "stops the others.",
        request=BatchRequestSerializer,
        responses={200: BatchResponseSerializer, 400: OpenApiResponse(ErrorSerializer), **AUTH},
    )
    def post(self, request: Request) -> Response:
        data = _object(request.data)
        calls = data.get("calls") if data else None
        if not isinstance(calls, list) or not calls:
            return Response(
                {
                    "detail": 'Send {"calls": [{"formula": …, "inputs": {…}}, …]}.',
                    "code": "invalid",
                },
                status=400,
            )
        if len(calls) > MAX_CALLS:
            return Response(
                {"detail": f"At most {MAX_CALLS} calls per request.", "code": "invalid"}, status=400
            )
        user: User = request.user  # type: ignore[assignment]
        gpus = gpu_table(user=user)
        out: list[dict[str, Any]] = []
        for call in calls:
            call = call if isinstance(call, dict) else {}
            inputs = call.get("inputs")
            try:
                if not isinstance(inputs, dict):
                    raise InputError("inputs", "must be an object")
                out.append(
                    {
                        "ok": True,
                        "result": evaluate(str(call.get("formula")), inputs, gpus=gpus).as_dict(),
                    }
                )
            except InputError as exc:
                out.append({"ok": False, "errors": _errors(exc)})
        return Response({"results": out})


class VectorView(APIView):
    @extend_schema(
        tags=["perfcalc"],
        summary="One formula over arrays of inputs (numpy)",
        description="Rows with a bad value get an error and a null value; the rest are computed.",
        request=VectorRequestSerializer,
        responses={200: VectorResponseSerializer, 400: BAD, **AUTH},
    )
    def post(self, request: Request) -> Response:
        data = _object(request.data) or {}
        inputs = data.get("inputs")
        if not isinstance(inputs, dict):
            return _bad(InputError("inputs", "must be an object of numbers or lists of numbers"))
        sizes = [len(v) for v in inputs.values() if isinstance(v, list)]
        if any(n > MAX_VECTOR for n in sizes):
            return _bad(InputError("inputs", f"at most {MAX_VECTOR:,} rows"))
        try:
            batch = evaluate_batch(str(data.get("formula")), inputs)
        except InputError as exc:
            return _bad(exc)
        values = [
            float(v) if ok else None
            for v, ok in zip(batch.values.reshape(-1), batch.valid.reshape(-1), strict=True)
        ]
        extras = {k: np.asarray(v).reshape(-1).tolist() for k, v in batch.extras.items()}
        return Response({"values": values, "errors": batch.errors, "extras": extras})
