"""The documentation a newcomer reads: a short README that leads into the guides, guides whose
pictures exist, and no setting of the server that the Operators guide leaves out. The site itself
is built with warnings as errors by `make test` (a broken reference or missing picture fails)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
TEST_ONLY = {"PYTEST_XDIST_WORKER", "TEST_DATABASE_NAME", "TEST_EMAIL_DIR"}
TEST_ONLY |= {"TEST_EMAIL_SMTP_PORT", "TEST_REDIS_URL"}


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_readme_is_a_front_door_under_15_kb_whose_links_lead_somewhere() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode()) <= 15 * 1024
    for must in ("make run", "make test", "courseops-demo", "student01@example.edu"):
        assert must in readme
    links = re.findall(r"\]\(((?!https?:)[^)#]+)", readme)
    assert len(links) >= 8
    assert [link for link in links if not (ROOT / link).exists()] == []


def test_every_task_in_the_students_guide_has_its_page_at_both_widths() -> None:
    sections = _sections((DOCS / "students.md").read_text(encoding="utf-8"))
    assert len(sections) >= 10
    for title, body in sections.items():
        pictures = re.findall(r"screens/guide/([\w-]+)-(390|1280)\.jpg", body)
        assert {width for _, width in pictures} == {"390", "1280"}, title
        for name, width in pictures:
            assert (DOCS / "screens" / "guide" / f"{name}-{width}.jpg").is_file(), (title, name)


def test_every_picture_the_screenshot_script_takes_is_in_a_guide() -> None:
    script = (DOCS / "screenshots.py").read_text(encoding="utf-8")
    names = re.findall(r'^    \("([\w-]+)", "[\w@.]+", "', script, flags=re.M)
    guides = "".join(p.read_text(encoding="utf-8") for p in DOCS.glob("*.md"))
    assert len(names) >= 20
    assert [name for name in names if f"screens/guide/{name}-390.jpg" not in guides] == []


def test_every_setting_the_server_reads_from_its_environment_is_in_the_operators_guide() -> None:
    settings = "".join(p.read_text() for p in (ROOT / "courseops" / "settings").glob("*.py"))
    names = set(re.findall(r'environ(?:\.get\(|\[)\s*"([A-Z][A-Z0-9_]+)"', settings))
    names |= set(re.findall(r'_env\w*\(\s*"([A-Z][A-Z0-9_]+)"', settings))
    guide = (DOCS / "operators.md").read_text(encoding="utf-8")
    assert len(names) > 30
    assert sorted(n for n in names - TEST_ONLY if f"`{n}`" not in guide) == []
