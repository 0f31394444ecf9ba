"""The calculator API: every quiz item through HTTP, errors as 400 with fields, batch and vector."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.core.models import Role
from apps.perfcalc.calc.registry import all_formulas
from apps.perfcalc.models import CustomGPU
from tests.factories import CourseFactory, UserFactory, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def api() -> APIClient:
    client = APIClient()
    client.force_authenticate(UserFactory())
    return client


QUIZ = [
    (
        "Q1",
        "roofline-time",
        {
            "flops": "32 GFLOP",
            "bytes_moved": "16 GB",
            "peak_flops_per_s": "1979 TFLOPS",
            "bandwidth_bytes_per_s": "3.35 TB/s",
        },
        16e9 / 3.35e12,
        "memory-bound",
    ),
    (
        "Q2",
        "decode-speedup",
        {
            "model_bytes": "16 GB",
            "flops_per_token": "32 GFLOP",
            "peak_a_flops_per_s": "624 TFLOPS",
            "bandwidth_a_bytes_per_s": "2.0 TB/s",
            "peak_b_flops_per_s": "1979 TFLOPS",
            "bandwidth_b_bytes_per_s": "3.35 TB/s",
        },
        1.675,
        "memory-bound on both",
    ),
    (
        "Q4",
        "ring-allreduce",
        {
            "message_bytes": "14 GB",
            "n_gpus": 64,
            "bandwidth_bytes_per_s": "50 GB/s",
            "convention": "approx-2m-bw",
        },
        0.56,
        None,
    ),
    (
        "Q5 fp16",
        "gpus-per-replica",
        {"model_bytes": 140e9, "gpu": "h100-sxm"},
        2,
        "needs 2-way model parallelism",
    ),
    (
        "Q5 int4",
        "gpus-per-replica",
        {"model_bytes": "35 GB", "gpu_memory_bytes": "80 GB"},
        1,
        "fits on one GPU",
    ),
    ("Q6 int4", "fleet-size", {"target_qps": 1000, "qps_per_replica": 25}, 40, None),
    (
        "Q6 fp16",
        "fleet-size",
        {"target_qps": 1000, "qps_per_replica": 20, "gpus_per_replica": 2},
        100,
        None,
    ),
    ("Q7 VA", "carbon", {"energy_kwh": "500 MWh", "carbon_intensity_g_per_kwh": 390}, 195, None),
    (
        "Q7 QC",
        "carbon",
        {"energy_kwh": "500 MWh", "carbon_intensity_g_per_kwh": "1.2 g/kWh"},
        0.6,
        None,
    ),
    ("Q9", "required-bandwidth", {"model_bytes": "16 GB", "latency_s": "40 ms"}, 400e9, None),
    ("Q10", "gpus-meeting-target", {"model_bytes": "16 GB", "latency_s": "40 ms"}, 8, None),
]


@pytest.mark.parametrize(
    ("item", "formula", "inputs", "value", "classification"), QUIZ, ids=[q[0] for q in QUIZ]
)
def test_quiz_items_through_the_api(api, item, formula, inputs, value, classification) -> None:  # type: ignore[no-untyped-def]
    response = api.post(f"/api/v1/perfcalc/{formula}/", inputs, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["value"] == pytest.approx(value)
    assert body["classification"] == classification
    assert body["steps"]
    assert body["equation"]


def test_q10_lists_which_gpus_pass(api) -> None:  # type: ignore[no-untyped-def]
    body = api.post(
        "/api/v1/perfcalc/gpus-meeting-target/",
        {"model_bytes": "16 GB", "latency_s": "40 ms"},
        format="json",
    ).json()
    meets = {g["gpu"]: g["meets"] for g in body["extras"]["gpus"]}
    assert (meets["a100-80gb"], meets["l40s"], meets["a10"], meets["t4"]) == (
        True,
        True,
        True,
        False,
    )


def test_bad_inputs_are_a_400_naming_each_field(api) -> None:  # type: ignore[no-untyped-def]
    response = api.post(
        "/api/v1/perfcalc/roofline-time/",
        {"flops": -1, "bytes_moved": "16 ms", "peak_flops_per_s": "NaN", "oops": 1},
        format="json",
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert errors["flops"] == ["must be greater than zero"]
    assert errors["bytes_moved"][0].startswith("'ms' is a time")
    assert errors["bandwidth_bytes_per_s"] == ["is required"]
    assert errors["oops"] == ["is not an input of this formula"]


@pytest.mark.parametrize("body", [[1, 2], "text", None])
def test_a_body_that_is_not_an_object_is_a_400(api, body) -> None:  # type: ignore[no-untyped-def]
    response = api.post("/api/v1/perfcalc/amdahl/", body, format="json")
    assert response.status_code == 400


def test_a_gpu_without_the_precision_is_a_400(api) -> None:  # type: ignore[no-untyped-def]
    response = api.post(
        "/api/v1/perfcalc/ridge-point/", {"gpu": "t4", "gpu_precision": "bf16"}, format="json"
    )
    assert response.status_code == 400
    assert "no dense BF16 peak" in response.json()["errors"]["gpu_precision"][0]


def test_every_formula_answers_its_example(api) -> None:  # type: ignore[no-untyped-def]
    for name, f in all_formulas().items():
        response = api.post(f"/api/v1/perfcalc/{name}/", f.example, format="json")
        assert response.status_code == 200, (name, response.json())


def test_batch_answers_each_call_in_order(api) -> None:  # type: ignore[no-untyped-def]
    calls = [
        {"formula": "amdahl", "inputs": {"fraction": 0.12, "speedup": 3}},
        {"formula": "amdahl", "inputs": {"fraction": 2}},
        {"formula": "nope", "inputs": {}},
        {
            "formula": "pipeline-bubble",
            "inputs": {"stages": 8, "microbatches": 4, "convention": "course-lab"},
        },
    ]
    results = api.post("/api/v1/perfcalc/batch/", {"calls": calls}, format="json").json()["results"]
    assert [r["ok"] for r in results] == [True, False, False, True]
    assert results[0]["result"]["value"] == pytest.approx(1 / 0.92)
    assert "fraction" in results[1]["errors"]
    assert results[2]["errors"] == {"formula": ["unknown formula 'nope'"]}
    assert results[3]["result"]["value"] == pytest.approx(7 / 32)


def test_batch_refuses_too_many_or_no_calls(api) -> None:  # type: ignore[no-untyped-def]
    assert api.post("/api/v1/perfcalc/batch/", {"calls": []}, format="json").status_code == 400
    many = [{"formula": "amdahl", "inputs": {"fraction": 0.1, "speedup": 2}}] * 1001
    assert api.post("/api/v1/perfcalc/batch/", {"calls": many}, format="json").status_code == 400


def test_vector_evaluates_arrays_and_flags_bad_rows(api) -> None:  # type: ignore[no-untyped-def]
    body = api.post(
        "/api/v1/perfcalc/vector/",
        {
            "formula": "roofline-time",
            "inputs": {
                "flops": [32e9, -5, 2 * 4096**3],
                "bytes_moved": [16e9, 16e9, 3 * 4096**2 * 2],
                "peak_flops_per_s": 989.5e12,
                "bandwidth_bytes_per_s": 3.35e12,
            },
        },
        format="json",
    ).json()
    assert body["values"][0] == pytest.approx(16e9 / 3.35e12)
    assert body["values"][1] is None
    assert body["errors"][1].startswith("flops")
    assert body["extras"]["memory_bound"] == [True, False, False]


def test_hardware_lists_sources_and_my_courses_custom_gpus_only() -> None:
    mine, theirs = CourseFactory(), CourseFactory()
    student = member(mine, Role.STUDENT)
    CustomGPU.objects.create(
        course=mine,
        key="node3",
        name="node 3 measured",
        source="GEMM sweep",
        memory_gb=80,
        bandwidth_gbs=3000,
        peaks_tflops={"bf16": {"dense": 700}},
    )
    CustomGPU.objects.create(
        course=theirs,
        key="secret",
        name="other course",
        source="x",
        memory_gb=80,
        bandwidth_gbs=3000,
        peaks_tflops={"bf16": {"dense": 700}},
    )
    client = APIClient()
    client.force_authenticate(student)
    gpus = {g["key"]: g for g in client.get("/api/v1/perfcalc/hardware/").json()["gpus"]}
    assert "custom:node3" in gpus
    assert "custom:secret" not in gpus
    assert all(g["source"] for g in gpus.values())
    used = client.post(
        "/api/v1/perfcalc/ridge-point/", {"gpu": "custom:node3"}, format="json"
    ).json()
    assert used["value"] == pytest.approx(700e12 / 3000e9)
    assert "GEMM sweep" in used["steps"][0]
    refused = client.post("/api/v1/perfcalc/ridge-point/", {"gpu": "custom:secret"}, format="json")
    assert refused.status_code == 400


@pytest.mark.parametrize("url", ["/api/v1/perfcalc/", "/api/v1/perfcalc/hardware/"])
def test_anonymous_is_401(url: str) -> None:
    assert APIClient().get(url).status_code == 401
    assert (
        APIClient()
        .post("/api/v1/perfcalc/amdahl/", {"fraction": 0.1, "speedup": 2}, format="json")
        .status_code
        == 401
    )


def test_the_index_describes_inputs_with_units(api) -> None:  # type: ignore[no-untyped-def]
    index = api.get("/api/v1/perfcalc/").json()
    assert len(index) == len(all_formulas())
    bw = next(i for i in index["roofline-time"]["inputs"] if i["name"] == "bandwidth_bytes_per_s")
    assert bw["unit"] == "B/s"
    assert bw["help"]
