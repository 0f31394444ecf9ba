"""Calculator pages: every formula renders, bad input is a field error (never a 500)."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.test import Client

from apps.perfcalc.calc.registry import all_formulas
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def client_in() -> Client:
    c = Client()
    c.force_login(UserFactory())
    return c


def test_pages_need_a_login() -> None:
    assert Client().get("/calc/").status_code == 302
    assert Client().get("/calc/roofline-time/").status_code == 302


def test_index_lists_every_formula(client_in: Client) -> None:
    page = client_in.get("/calc/").content.decode()
    for name in all_formulas():
        assert f"/calc/{name}/" in page


@pytest.mark.parametrize("name", sorted(all_formulas()))
def test_every_formula_page_renders_empty_and_with_its_example(
    client_in: Client, name: str
) -> None:
    f = all_formulas()[name]
    assert client_in.get(f"/calc/{name}/").status_code == 200
    query = urlencode(
        {k: ",".join(map(str, v)) if isinstance(v, list) else v for k, v in f.example.items()}
    )
    page = client_in.get(f"/calc/{name}/?{query}").content.decode()
    assert 'id="answer"' in page, name
    assert "Worked solution" in page


def test_q1_roofline_page_shows_the_bound_and_a_plot(client_in: Client) -> None:
    page = client_in.get(
        "/calc/roofline-time/?flops=32+GFLOP&bytes_moved=16+GB&gpu=h100-sxm"
    ).content.decode()
    assert "memory-bound" in page
    assert "<svg" in page
    assert 'class="roof"' in page
    assert 'class="point"' in page
    assert "NVIDIA H100 SXM5 80GB: BF16 dense peak 989.5 TFLOP/s" in page


def test_bad_input_is_shown_on_the_field(client_in: Client) -> None:
    response = client_in.get(
        "/calc/roofline-time/?flops=-3&bytes_moved=16+ms&peak_flops_per_s=1&bandwidth_bytes_per_s=1"
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert 'aria-describedby="id_flops_helptext id_flops_error"' in page  # read with the field
    assert 'id="id_flops_error">must be greater than zero' in page
    assert 'id="id_bytes_moved_error"' in page
    assert "is a time" in page
    assert 'id="answer"' not in page


def test_a_missing_required_field_says_so(client_in: Client) -> None:
    page = client_in.get("/calc/amdahl/?fraction=0.5").content.decode()
    assert 'id="id_speedup_error"' in page
    assert "is required" in page


def test_unknown_formula_is_404(client_in: Client) -> None:
    assert client_in.get("/calc/warp-drive/").status_code == 404


def test_compare_ranks_gpus_and_skips_missing_modes(client_in: Client) -> None:
    page = client_in.get(
        "/calc/compare/?flops=32+GFLOP&bytes_moved=16+GB&precision=bf16"
    ).content.decode()
    assert page.index("NVIDIA B200") < page.index("NVIDIA A10 24GB")  # fastest first
    assert "no BF16 mode" in page  # T4
    assert "<svg" in page


def test_compare_with_bad_input_explains(client_in: Client) -> None:
    page = client_in.get("/calc/compare/?flops=lots&bytes_moved=16+GB").content.decode()
    assert "flops: &#x27;lots&#x27; is not a number" in page


def test_hardware_page_cites_every_gpu(client_in: Client) -> None:
    page = client_in.get("/calc/hardware/").content.decode()
    assert "989.5 / 1,979" in page  # H100 SXM BF16 dense / sparse
    assert "datasheet" in page
    assert "InfiniBand HDR200" in page


def test_a_shared_url_shows_the_precision_the_answer_used(client) -> None:  # type: ignore[no-untyped-def]
    """The worked solution uses the BF16 dense peak by default; the select must say BF16, not
    the first option (FP32), when the URL leaves it out."""
    import re

    from tests.factories import CourseFactory, member

    client.force_login(member(CourseFactory()))
    page = client.get(
        "/calc/roofline-time/?flops=32+GFLOP&bytes_moved=16+GB&gpu=h100-sxm"
    ).content.decode()
    selected = re.search(
        r'name="gpu_precision"[^>]*>.*?<option value="([a-z0-9]+)"[^>]*selected', page, re.S
    )
    assert selected is not None
    assert selected.group(1) == "bf16"
    assert "BF16" in page
