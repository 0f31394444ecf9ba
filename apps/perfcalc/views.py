from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe

from apps.core.http import AuthedRequest
from apps.perfcalc import svg
from apps.perfcalc.calc import catalog
from apps.perfcalc.calc import plan as planner
from apps.perfcalc.calc.catalog import PRECISIONS
from apps.perfcalc.calc.core import InputError, Result, fmt
from apps.perfcalc.calc.evaluate import HARDWARE_FIELDS, evaluate
from apps.perfcalc.calc.registry import TOPICS, InputErrors, all_formulas
from apps.perfcalc.forms import formula_form
from apps.perfcalc.selectors import gpu_table

ROOFLINE_FORMULAS = {"roofline-time", "decode-step-time", "ridge-point"}


@login_required
def index(request: AuthedRequest) -> HttpResponse:
    by_topic: dict[str, list[Any]] = {key: [] for key in TOPICS}
    for f in all_formulas().values():
        by_topic[f.topic].append(f)
    return render(
        request, "perfcalc/index.html", {"topics": [(TOPICS[k], v) for k, v in by_topic.items()]}
    )


def _plot(result: Result) -> str | None:
    e, inputs = result.extras, result.inputs
    if result.formula == "ridge-point":
        roof = svg.Roof(
            e.get("gpu_name", "GPU"),
            float(inputs["peak_flops_per_s"]),
            float(inputs["bandwidth_bytes_per_s"]),
        )
        return svg.roofline_svg([roof], [], title=f"Roofline with ridge at {result.display}")
    if result.formula not in {"roofline-time", "decode-step-time"}:
        return None
    peak = float(inputs["peak_flops_per_s"])
    bw = float(inputs["bandwidth_bytes_per_s"])
    if result.formula == "roofline-time":
        ai, attained = e["arithmetic_intensity"], e["attainable_flops_per_s"]
    else:
        flops = float(inputs["flops_per_token"]) * float(inputs.get("batch_size") or 1)
        ai = flops / float(inputs["model_bytes"])
        attained = min(peak, ai * bw)
    label = f"workload ({result.classification})"
    return svg.roofline_svg(
        [svg.Roof(e.get("gpu_name", "GPU"), peak, bw)],
        [svg.Point(label, ai, attained)],
        title=f"Roofline: {result.classification} at {fmt(ai, '')} FLOP/B",
    )


@login_required
def formula_page(request: AuthedRequest, name: str) -> HttpResponse:
    formulas = all_formulas()
    if name not in formulas:
        raise Http404("No such formula.")
    f = formulas[name]
    gpus = gpu_table(user=request.user)
    submitted = any(k in request.GET for k in [p.name for p in f.params] + list(HARDWARE_FIELDS))
    form = formula_form(f, gpus, request.GET if submitted else None)
    result = plot = None
    if submitted and form.is_valid():
        raw = {k: v for k, v in form.cleaned_data.items() if v not in ("", None, False)}
        try:
            result = evaluate(name, raw, gpus=gpus)
        except InputError as exc:
            errors = exc.errors if isinstance(exc, InputErrors) else [exc]
            for err in errors:
                form.add_error(err.field if err.field in form.fields else None, err.message)
        else:
            plot = _plot(result)
    return render(
        request,
        "perfcalc/formula.html",
        {
            "formula": f,
            "topic": TOPICS[f.topic],
            "form": form,
            "result": result,
            "plot": mark_safe(plot) if plot else None,
            "submitted": submitted,
        },
    )


@login_required
def compare(request: AuthedRequest) -> HttpResponse:
    """One workload on every GPU: roofline time, bound, and a plot of every roof."""
    gpus = gpu_table(user=request.user)
    precision = request.GET.get("precision", "bf16")
    precision = precision if precision in PRECISIONS else "bf16"
    sparse = request.GET.get("sparse") in {"on", "true", "1"}
    rows: list[dict[str, Any]] = []
    error = plot = None
    flops, bytes_moved = request.GET.get("flops", ""), request.GET.get("bytes_moved", "")
    if flops or bytes_moved:
        roofs, point = [], None
        for g in gpus.values():
            try:
                peak = g.peak(precision, sparse=sparse)
            except InputError:
                rows.append({"gpu": g, "missing": True})
                continue
            try:
                r = evaluate(
                    "roofline-time",
                    {
                        "flops": flops,
                        "bytes_moved": bytes_moved,
                        "peak_flops_per_s": peak,
                        "bandwidth_bytes_per_s": g.bandwidth_bytes_per_s,
                    },
                )
            except InputError as exc:
                errs = exc.errors if isinstance(exc, InputErrors) else [exc]
                error = "; ".join(f"{e.field}: {e.message}" for e in errs)
                rows = []
                break
            rows.append({"gpu": g, "result": r, "peak": peak})
            roofs.append(svg.Roof(g.name, peak, g.bandwidth_bytes_per_s))
            point = r.extras["arithmetic_intensity"]
        ok = [row for row in rows if "result" in row]
        if ok:
            fastest = min(row["result"].value for row in ok)
            for row in ok:
                row["relative"] = row["result"].value / fastest
            rows.sort(key=lambda row: row["result"].value if "result" in row else float("inf"))
            marker = [svg.Point(f"workload: {fmt(point, '')} FLOP/B", point)] if point else []
            plot = mark_safe(
                svg.roofline_svg(roofs, marker, title="Every GPU's roofline for this workload")
            )
    return render(
        request,
        "perfcalc/compare.html",
        {
            "rows": rows,
            "error": error,
            "plot": plot,
            "precision": precision,
            "sparse": sparse,
            "precisions": PRECISIONS,
            "flops": flops,
            "bytes_moved": bytes_moved,
        },
    )


@login_required
def hardware(request: AuthedRequest) -> HttpResponse:
    gpus = gpu_table(user=request.user)
    return render(
        request,
        "perfcalc/hardware.html",
        {
            "gpus": gpus.values(),
            "links": catalog.links().values(),
            "precisions": PRECISIONS,
            "models": catalog.models().values(),
        },
    )


PLAN_FIELDS = [
    ("model", "Model", "From the model catalog (figures and sources on the hardware page)."),
    (
        "scale",
        "Scale",
        "course: the course's 8 nodes (yours plus any borrowed); cluster: up to 1,024 nodes.",
    ),
    (
        "nodes",
        "Nodes",
        "8×H100 nodes: 1–8 at the course scale, up to 1,024 at the cluster scale (64 = 512 GPUs).",
    ),
    ("tp", "Tensor parallel (TP)", "1, 2, 4 or 8: GPUs splitting each layer, inside one node."),
    ("pp", "Pipeline stages (PP)", "Must divide the model's layers."),
    ("dp", "Data parallel (DP)", "Replicas; TP × PP × DP must equal the GPUs (8 per node)."),
    ("micro_batch", "Micro-batch", "Sequences per micro-batch."),
    (
        "global_batch",
        "Global batch",
        "Sequences per optimizer step; a multiple of DP × micro-batch.",
    ),
    ("sequence_length", "Sequence length", "Tokens per sequence."),
    (
        "zero_stage",
        "ZeRO stage",
        "0 none; 1 optimizer state; 2 + gradients; 3 + weights, sharded across DP.",
    ),
    (
        "recompute",
        "Recomputation",
        "none, selective (attention only) or full (keep each layer's input).",
    ),
    (
        "kernel_efficiency",
        "Kernel efficiency",
        "Share of the BF16 dense peak the matrix multiplies reach, e.g. 0.6.",
    ),
]
PLAN_CHOICES = {
    "scale": [(s, s) for s in planner.SCALES],
    "zero_stage": [(z, z) for z in planner.ZERO_STAGES],
    "recompute": [(r, r) for r in planner.RECOMPUTE],
}


@login_required
def plan_page(request: AuthedRequest) -> HttpResponse:
    """The planner: inputs in the URL (shareable), defaults filled in, every bad field named."""
    from urllib.parse import urlencode

    raw = {name: request.GET.get(name, "") for name, _, _ in PLAN_FIELDS}
    given = {k: v for k, v in raw.items() if v != ""}
    errors: dict[str, list[str]] = {}
    result = None
    try:
        result = planner.plan(given)
    except InputError as exc:
        for e in exc.errors if isinstance(exc, InputErrors) else [exc]:
            errors.setdefault(e.field if e.field in raw else "__all__", []).append(e.message)
    shown = {**{k: str(v) for k, v in planner.DEFAULTS.items()}, **given}
    choices = {"model": [(k, m.name) for k, m in catalog.models().items()], **PLAN_CHOICES}
    fields = [
        {
            "name": n,
            "label": label,
            "help": help_text,
            "value": shown.get(n, ""),
            "choices": choices.get(n),
            "errors": errors.get(n, []),
        }
        for n, label, help_text in PLAN_FIELDS
    ]
    ctx: dict[str, Any] = {
        "fields": fields,
        "general_errors": errors.get("__all__", []),
        "plan": result,
    }
    if result is not None:
        c = result.inputs
        shared = {k: v for k, v in c.items() if (k, v) != ("scale", "course")}
        mem = result.memory
        ctx.update(
            gpus=c["nodes"] * planner.GPUS_PER_NODE,
            spare=mem["capacity"] - mem["total"],
            over=mem["total"] - mem["capacity"],
            # The course scale is the default: shared links stay as they were before the cluster.
            query=urlencode(shared),
            base_query=urlencode({k: v for k, v in shared.items() if k not in {"tp", "pp", "dp"}}),
            intra=catalog.links()[planner.INTRA_LINK],
            inter=catalog.links()[planner.INTER_LINK],
            memory_svg=mark_safe(
                svg.stacked_bar_svg(
                    [
                        (label, mem[key], fmt(mem[key], "B"))
                        for key, label in (
                            ("weights", "Weights"),
                            ("gradients", "Gradients"),
                            ("optimizer", "Optimizer state"),
                            ("activations", "Activations"),
                        )
                    ],
                    title="Memory per GPU",
                    total_label=fmt(mem["total"], "B"),
                    limit=(f"GPU memory {fmt(mem['capacity'], 'B')}", mem["capacity"]),
                    id_prefix="mem",
                )
            ),
            time_svg=mark_safe(
                svg.stacked_bar_svg(
                    [
                        (
                            label,
                            result.time[key],
                            fmt(result.time[key], "s") if result.time[key] else "0 s",
                        )
                        for key, label in planner.PARTS
                    ],
                    title="Step time",
                    total_label=fmt(result.time["total_s"], "s"),
                    id_prefix="time",
                )
            ),
        )
    return render(request, "perfcalc/plan.html", ctx, status=200)
