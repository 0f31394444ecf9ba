"""The training-step planner: the page a group opens before asking for a sharing window, and
the same figures from one API call."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.perfcalc.calc import plan as planner
from apps.perfcalc.calc.core import InputError
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
URL = "model=llama-3-70b&nodes=2&tp=8&pp=2&dp=1"


@pytest.fixture
def client_in() -> Client:
    c = Client()
    c.force_login(UserFactory())
    return c


def test_the_page_shows_memory_per_gpu_and_the_step_time_picture(client_in: Client) -> None:
    page = client_in.get(f"/calc/plan/?{URL}").content.decode()
    plan = planner.plan({"model": "llama-3-70b", "nodes": 2, "tp": 8, "pp": 2, "dp": 1})
    assert "Llama 3 70B on 2 nodes (16 × NVIDIA H100 SXM5 80GB)" in page
    assert "82.01 GB per GPU" in page
    assert "does not fit: 2.009 GB over 80 GB" in page
    assert "<svg" in page
    assert 'id="time-title">Step time</title>' in page
    assert 'id="mem-title">Memory per GPU' in page
    for label in ("Compute", "Tensor-parallel AllReduce", "Pipeline sends", "Pipeline bubble"):
        assert label in page
    assert plan.fits is False
    assert plan.rank is None
    assert "No layout of 16 GPUs fits" in page


def test_the_api_gives_the_same_figures(client_in: Client) -> None:
    api = APIClient()
    api.force_authenticate(UserFactory())
    data = api.get(f"/api/v1/perfcalc/plan/?{URL}").json()
    plan = planner.plan({"model": "llama-3-70b", "nodes": 2, "tp": 8, "pp": 2, "dp": 1})
    assert data["memory_bytes"]["total"] == plan.memory["total"]
    assert data["time_s"] == plan.time
    parts = sum(v for k, v in data["time_s"].items() if k != "total_s")
    assert data["time_s"]["total_s"] == pytest.approx(parts, rel=1e-12)
    assert data["memory_bytes"]["total"] == pytest.approx(
        sum(data["memory_bytes"][k] for k in ("weights", "gradients", "optimizer", "activations")),
        rel=1e-12,
    )
    page = client_in.get(f"/calc/plan/?{URL}").content.decode()
    assert "/api/v1/perfcalc/plan/?model=llama-3-70b&amp;nodes=2&amp;tp=8&amp;pp=2&amp;dp=1" in page


def test_a_layout_that_fits_is_ranked_and_the_fastest_ranks_first(client_in: Client) -> None:
    mine = planner.plan(
        {"model": "llama-3-8b", "nodes": 1, "tp": 1, "pp": 1, "dp": 8, "zero_stage": "1"}
    )
    assert mine.fits
    assert 1 <= (mine.rank or 0) <= mine.feasible
    best = mine.alternatives[0]
    top = planner.plan(
        {
            "model": "llama-3-8b",
            "nodes": 1,
            "tp": best["tp"],
            "pp": best["pp"],
            "dp": best["dp"],
            "zero_stage": "1",
        }
    )
    assert top.rank == 1
    assert [a["step_s"] for a in mine.alternatives] == sorted(
        a["step_s"] for a in mine.alternatives
    )
    page = client_in.get("/calc/plan/?model=llama-3-8b&nodes=1&tp=1&pp=1&dp=8").content.decode()
    assert f"ranks <strong>{mine.rank} of {mine.feasible}</strong>" in page
    assert "fits in 80 GB" in page


def test_more_nodes_make_the_step_faster_for_the_same_batch() -> None:
    one = planner.plan({"model": "llama-3-8b", "nodes": 1, "tp": 1, "pp": 1, "dp": 8})
    two = planner.plan({"model": "llama-3-8b", "nodes": 2, "tp": 1, "pp": 1, "dp": 16})
    assert two.time["compute_s"] == pytest.approx(one.time["compute_s"] / 2, rel=1e-12)
    assert two.time["dp_comm_s"] > one.time["dp_comm_s"]  # the gradients now cross the network


def test_the_default_page_plans_something(client_in: Client) -> None:
    page = client_in.get("/calc/plan/").content.decode()
    assert "Llama 3 8B on 1 node" in page
    assert "per GPU" in page


@pytest.mark.parametrize(
    ("query", "field", "words"),
    [
        ("nodes=9", "nodes", "from 1 to 8"),
        ("nodes=1&tp=8&pp=1&dp=2", "dp", "must equal the 8 GPUs of 1 node"),
        ("nodes=1&tp=3&pp=1&dp=8", "tp", "1, 2, 4 or 8"),
        ("nodes=1&tp=1&pp=3&dp=8", "pp", "32 layers evenly"),
        ("global_batch=60&dp=8", "global_batch", "multiple of DP × micro-batch = 8"),
        ("model=gpt-9", "model", "unknown model"),
        ("zero_stage=5", "zero_stage", "one of: 0, 1, 2, 3"),
        ("kernel_efficiency=1.5", "kernel_efficiency", "at most 1"),
        ("micro_batch=abc", "micro_batch", "whole number"),
    ],
)
def test_bad_input_names_the_field_on_the_page_and_in_the_api(
    client_in: Client, query: str, field: str, words: str
) -> None:
    page = client_in.get(f"/calc/plan/?{query}")
    assert page.status_code == 200
    html = page.content.decode()
    assert f'id="err-{field}"' in html
    assert words in html
    api = APIClient()
    api.force_authenticate(UserFactory())
    r = api.get(f"/api/v1/perfcalc/plan/?{query}")
    assert r.status_code == 400
    assert words in " ".join(r.json()["errors"][field])


def test_clean_refuses_bad_values_without_a_request() -> None:
    with pytest.raises(InputError):
        planner.plan({"nodes": "0"})


def test_the_catalog_page_lists_models_with_sources(client_in: Client) -> None:
    page = client_in.get("/calc/hardware/").content.decode()
    assert "DeepSeek-V3" in page
    assert "arXiv 2412.19437" in page
    assert "MLA latent 512 + RoPE 64" in page
    assert "GCP A3 High network" in page
    api = APIClient()
    api.force_authenticate(UserFactory())
    models = api.get("/api/v1/perfcalc/models/").json()["models"]
    assert {m["key"] for m in models} >= {"llama-3-70b", "mixtral-8x7b", "deepseek-v3"}
    assert all(m["source"] for m in models)


def test_the_formula_index_lists_at_least_55_and_says_which_take_a_model(client_in: Client) -> None:
    api = APIClient()
    api.force_authenticate(UserFactory())
    index = api.get("/api/v1/perfcalc/").json()
    assert len(index) >= 55
    assert index["kv-cache"]["uses_model"]
    assert not index["amdahl"]["uses_model"]
    r = api.post(
        "/api/v1/perfcalc/tpot/",
        {"model": "llama-3-8b", "context_length": 4096, "gpu": "h100-sxm"},
        format="json",
    )
    assert r.status_code == 200
    assert r.json()["steps"][0].startswith("Llama 3 8B:")
    bad = api.post(
        "/api/v1/perfcalc/mla-kv-cache/",
        {"model": "llama-3-8b", "sequence_length": 10},
        format="json",
    )
    assert bad.status_code == 400
    assert "model" in bad.json()["errors"]
    page = client_in.get("/calc/kv-cache/?model=llama-3-70b&sequence_length=8192").content.decode()
    assert "Llama 3 70B: layers 80" in page
    assert "2.684 GB" in page


def test_the_cluster_scale_plans_512_gpus_and_ranks_every_layout(client_in: Client) -> None:
    """Lab 09's 70B run on 512 H100s: beyond the course's 8 nodes only when asked (the course
    scale names its limit), every layout of the 512 GPUs evaluated and ranked."""
    case = {"model": "llama-3-70b", "nodes": 64, "tp": 8, "pp": 8, "dp": 8, "global_batch": 1024}
    with pytest.raises(InputError, match="the course's nodes"):
        planner.clean(case)
    big = planner.plan({**case, "scale": "cluster"})
    assert big.inputs["nodes"] * 8 == 512
    assert big.fits
    assert big.rank is not None
    assert 1 <= big.rank <= big.feasible
    best = big.alternatives[0]
    assert best["tp"] * best["pp"] * best["dp"] == 512
    assert best["step_s"] <= big.time["total_s"]
    page = client_in.get(
        "/calc/plan/?scale=cluster&model=llama-3-70b&nodes=64&tp=8&pp=8&dp=8&global_batch=1024"
    ).content.decode()
    assert "512 ×" in page
    api = APIClient()
    api.force_authenticate(UserFactory())
    r = api.get("/api/v1/perfcalc/plan/", {**case, "scale": "cluster"})
    assert r.status_code == 200
    assert r.json()["feasible_layouts"] == big.feasible
    assert api.get("/api/v1/perfcalc/plan/", {**case, "scale": "galaxy"}).status_code == 400
