"""The documentation a newcomer reads: a short README that leads into the guides, guides whose
pictures exist, and a configuration reference that is the settings' own declaration. The site itself
is built with warnings as errors by `make test` (a broken reference or missing picture fails)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_readme_is_a_front_door_under_8_kb_whose_links_lead_somewhere() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode()) <= 8 * 1024
    for must in ("make run", "make test", "courseops-demo", "student01@example.edu", "docs/"):
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


def test_the_configuration_reference_is_the_declaration_as_built() -> None:
    """docs/configuration.md (committed, so it reads on GitHub too) is what the docs build writes
    from courseops/settings/env.py; tests/core/test_env_declared.py holds the code to that."""
    import sys

    sys.path.insert(0, str(DOCS / "_ext"))
    from config_reference import render

    from courseops.settings.env import VARS

    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert page == render(), "run make docs and commit docs/configuration.md"
    assert [v.name for v in VARS if f"| `{v.name}` |" not in page] == []


def test_every_start_up_check_and_refusal_page_names_its_troubleshooting_entry() -> None:
    """Each check id in the code has its entry, and its hint ends with the entry's address
    (apps.core.checks.see); each refusal page points its administrator at its entry."""
    guide = (DOCS / "troubleshooting.md").read_text(encoding="utf-8")
    anchors = set(re.findall(r"^\(([\w-]+)\)=$", guide, flags=re.M))
    code = {p: p.read_text() for d in ("apps", "courseops") for p in (ROOT / d).rglob("*.py")}
    ids = {i for text in code.values() for i in re.findall(r'id="(courseops\.[EW]\d+)"', text)}
    assert len(ids) >= 7
    assert sorted(i for i in ids if i.lower().replace(".", "-") not in anchors) == []
    unhinted = [
        f"{p.name}: {i}"
        for p, text in code.items()
        for i in re.findall(r'id="(courseops\.[EW]\d+)"', text)
        if f'see("{i}"' not in re.sub(r"\s+", "", text)
    ]
    assert unhinted == []
    pages = {
        "sso/refused.html": "sign-on-refused",
        "sso/saml_unavailable.html": "saml-unavailable",
        "sso/password_off.html": "password-off",
        "503.html": "briefly-unavailable",
        "registration/login.html": "locked-out",
    }
    for template, anchor in pages.items():
        assert anchor in anchors, anchor
        text = (ROOT / "templates" / template).read_text(encoding="utf-8")
        assert f"docs/troubleshooting.md#{anchor}" in text, template


def test_each_migration_added_since_the_changelogs_baseline_has_an_upgrade_note() -> None:
    """CHANGELOG.md's rule: a migration added after the baseline commit it records is named in
    its Upgrade notes (by app and file name, e.g. `slackdays/0007_ledger_reason`)."""
    import subprocess

    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert changelog.startswith("# Changelog")
    assert "## [Unreleased]" in changelog
    assert "### Upgrade notes" in changelog.split("## [Unreleased]", 1)[1].split("\n## ", 1)[0]
    base = re.search(r"<!-- upgrade-notes-baseline: (\w+) -->", changelog)
    assert base, "CHANGELOG.md records no baseline commit"
    at_base = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", base[1], "--", "apps"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,  # a clone without the baseline commit fails here, loudly
    ).stdout.split()
    now = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "apps").glob("*/migrations/0*.py"))
    assert len(now) >= 50
    new = [p for p in now if p not in set(at_base)]
    named = [f"{p.split('/')[1]}/{Path(p).stem}" for p in new]
    assert [n for n in named if n not in changelog] == [], "add an Upgrade notes line"


GUIDE_ROLES = {"students.md": "student", "tas.md": "ta", "instructors.md": "instructor"}
GUIDE_ROLES["operators.md"] = "instructor"


def menu_paths(text: str) -> list[tuple[str, str]]:
    """The "Section → Page" paths a guide tells people to follow: bold, or in parentheses."""
    bold = re.findall(r"\*\*([^*→\n]+?) → ([^*\n]+?)\*\*", text)
    return bold + re.findall(r"\(([A-Z][\w &]+?) → ([^)\n]+?)\)", text)


def test_every_menu_path_in_the_guides_is_one_the_menu_shows() -> None:
    """Each path is checked against the navigation registry as that guide's reader sees it: the
    section's label, then a page filed under it for their role."""
    from apps.core import registry
    from apps.core.models import Role

    roles = {"student": Role.STUDENT, "ta": Role.TA, "instructor": Role.INSTRUCTOR}
    wrong, checked = [], 0
    for guide, who in GUIDE_ROLES.items():
        role = roles[who]
        sections = {s.key: s.label for s in registry.sections_for(role)}
        shown = {
            (sections.get(registry.section_of(i, role), ""), i.label)
            for i in registry.nav_for(role)
        }
        for section, page in menu_paths((DOCS / guide).read_text(encoding="utf-8")):
            checked += 1
            if (section, page) not in shown:
                wrong.append(f"{guide}: {section} → {page} ({who} sees no such page)")
    assert checked >= 12
    assert wrong == []


def test_the_path_check_reads_bold_and_bracketed_paths() -> None:
    text = "Open **Grades → Slack days** (Compute → Cloud project), not *Admin → Keys*."
    assert menu_paths(text) == [("Grades", "Slack days"), ("Compute", "Cloud project")]


def _screenshots():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location("screenshots", DOCS / "screenshots.py")
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _alive(pid: int) -> bool:
    import os

    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_make_screenshots_waits_with_progress_and_always_stops_its_server(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A server that never answers: progress is printed, the wait ends at its bound, and the
    server's whole process group is gone afterwards. One that answers: the body runs, and the
    server is stopped after it too, even when the body fails."""
    import os
    import socket
    import sys

    import pytest

    shots = _screenshots()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ)
    pid_file = tmp_path / "pid"
    mute = [
        sys.executable,
        "-c",
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
        "print('loading the demo', flush=True); time.sleep(120)",
    ]
    with pytest.raises(SystemExit, match="did not answer within 6 s"):  # noqa: SIM117
        with shots.serving(mute, port, env, wait_s=6):
            pass  # never reached
    assert "== waiting for the demo server, 5 s: loading the demo" in capsys.readouterr().out
    assert not _alive(int(pid_file.read_text()))
    answers = (
        "import http.server as h\n"
        "class H(h.BaseHTTPRequestHandler):\n"
        "    def do_GET(self):\n"
        "        self.send_response(200); self.end_headers(); self.wfile.write(b'ok')\n"
        f"h.HTTPServer(('127.0.0.1', {port}), H).serve_forever()\n"
    )
    started = []
    with pytest.raises(RuntimeError):  # noqa: SIM117, PT012 — the failure happens inside
        with shots.serving([sys.executable, "-c", answers], port, env, wait_s=30) as server:
            started.append(server.pid)
            raise RuntimeError("a screenshot failed")
    assert started
    assert not _alive(started[0])
