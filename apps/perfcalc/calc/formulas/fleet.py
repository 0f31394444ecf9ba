"""Serving fleets, energy and carbon."""

from __future__ import annotations

from apps.perfcalc.calc.core import Result, fmt, sig
from apps.perfcalc.calc.formulas.common import ceil_count
from apps.perfcalc.calc.registry import Param, register

PUE = Param(
    "pue",
    "PUE",
    "",
    "Power usage effectiveness of the data centre (1 = none counted; typical 1.1–1.5).",
    kind="factor",
    default=1.0,
)


def _fleet_v(target_qps, qps_per_replica, gpus_per_replica):
    replicas = ceil_count(target_qps / qps_per_replica)
    return replicas * gpus_per_replica, {"replicas": replicas}


@register(
    name="fleet-size",
    title="Fleet size from QPS",
    topic="fleet",
    summary="GPUs = ceil(target QPS / QPS per replica) × GPUs per replica.",
    params=[
        Param("target_qps", "Target load", "QPS", "Requests per second to serve, e.g. 1000."),
        Param("qps_per_replica", "QPS per replica", "QPS", "What one replica sustains, e.g. 25."),
        Param(
            "gpus_per_replica",
            "GPUs per replica",
            "",
            "e.g. 2 for a 70B FP16 model on 80 GB GPUs.",
            kind="int",
            default=1,
        ),
    ],
    result_unit="GPUs",
    vector=_fleet_v,
    example={"target_qps": 1000, "qps_per_replica": 20, "gpus_per_replica": 2},
)
def fleet_size(*, target_qps: float, qps_per_replica: float, gpus_per_replica: int) -> Result:
    replicas = int(ceil_count(target_qps / qps_per_replica))
    gpus = replicas * gpus_per_replica
    return Result(
        "fleet-size",
        float(gpus),
        "GPUs",
        "Fleet GPUs",
        "GPUs = ceil(QPS / QPS per replica) × GPUs per replica",
        (
            f"replicas = ceil({sig(target_qps)} / {sig(qps_per_replica)}) = {replicas}",
            f"GPUs = {replicas} × {gpus_per_replica} = {gpus}",
        ),
        extras={"replicas": replicas},
    )


def _energy_v(n_devices, power_watts, duration_s, pue):
    return n_devices * power_watts * duration_s * pue / 3.6e6


@register(
    name="energy",
    title="Energy",
    topic="fleet",
    summary="kWh = devices × power × time × PUE.",
    params=[
        Param("n_devices", "Devices", "", "GPUs (or nodes) drawing power.", kind="int"),
        Param("power_watts", "Power per device", "W", "Average draw, e.g. 700 W (H100 SXM TDP)."),
        Param("duration_s", "Duration", "s", "e.g. 30 days or 720 h."),
        PUE,
    ],
    result_unit="kWh",
    vector=_energy_v,
    example={"n_devices": 512, "power_watts": "700 W", "duration_s": "30 days", "pue": 1.2},
)
def energy(*, n_devices: int, power_watts: float, duration_s: float, pue: float) -> Result:
    kwh = float(_energy_v(n_devices, power_watts, duration_s, pue))
    return Result(
        "energy",
        kwh,
        "kWh",
        "Energy",
        "E = N · P · t · PUE",
        (
            f"E = {n_devices} × {fmt(power_watts, 'W')} × {fmt(duration_s, 's')} × {sig(pue)}",
            f"E = {sig(kwh * 3.6e6)} J = {sig(kwh)} kWh = {sig(kwh / 1000)} MWh",
        ),
        extras={"joules": kwh * 3.6e6, "mwh": kwh / 1000},
    )


def _carbon_v(energy_kwh, carbon_intensity_g_per_kwh, pue):
    return energy_kwh * pue * carbon_intensity_g_per_kwh / 1e6


@register(
    name="carbon",
    title="Carbon emissions",
    topic="fleet",
    summary="tonnes CO₂ = kWh × PUE × gCO₂/kWh / 10⁶.",
    params=[
        Param("energy_kwh", "Energy", "kWh", "IT energy, e.g. 500 MWh."),
        Param(
            "carbon_intensity_g_per_kwh",
            "Grid carbon intensity",
            "g/kWh",
            "e.g. 390 g/kWh (Virginia), 1.2 g/kWh (Quebec).",
        ),
        PUE,
    ],
    result_unit="t",
    vector=_carbon_v,
    example={"energy_kwh": "500 MWh", "carbon_intensity_g_per_kwh": 390},
)
def carbon(*, energy_kwh: float, carbon_intensity_g_per_kwh: float, pue: float) -> Result:
    tonnes = float(_carbon_v(energy_kwh, carbon_intensity_g_per_kwh, pue))
    grams = tonnes * 1e6
    steps = (
        [f"facility energy = {sig(energy_kwh)} kWh × PUE {sig(pue)} = {sig(energy_kwh * pue)} kWh"]
        if pue != 1
        else []
    )
    steps += [
        f"CO₂ = {sig(energy_kwh * pue)} kWh × {sig(carbon_intensity_g_per_kwh)} g/kWh = "
        f"{sig(grams)} g",
        f"= {sig(grams / 1000)} kg = {sig(tonnes)} t",
    ]
    return Result(
        "carbon",
        tonnes,
        "t",
        "CO₂ emitted",
        "CO₂ = E · PUE · intensity",
        tuple(steps),
        extras={"kg": tonnes * 1000},
    )
