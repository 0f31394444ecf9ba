"""The POST forms of a page as a person meets them, for the walks over every page of the URL conf
(`test_aria_references`, `test_confirmations`, `test_form_junk`): where each sends, what it sends
unseen, what a person fills in, and whether it asks before it acts."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin

NOT_FILLED = {"hidden", "submit", "button", "reset", "image", "file"}
# Who walks: a student in a group, one in none (the pages that work per group read otherwise),
# a TA and an instructor.
WALKERS = ("student_a", "student_solo", "ta", "instructor")


@dataclass
class PostForm:
    action: str  # absolute path the form posts to
    hidden: dict[str, str] = field(default_factory=dict)  # sent as the page set them
    fields: list[str] = field(default_factory=list)  # names a person types, ticks or picks
    asks: bool = False  # a data-confirm dialog, or a `confirm` field to tick or already set


class _Forms(HTMLParser):
    def __init__(self, page_url: str) -> None:
        super().__init__()
        self.page_url = page_url
        self.forms: list[PostForm] = []
        self.open: PostForm | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form" and (a.get("method") or "").lower() == "post":
            action = urljoin(self.page_url, a.get("action") or self.page_url)
            self.open = PostForm(action, asks="data-confirm" in a)
        elif self.open is not None and tag in ("input", "select", "textarea"):
            name, kind = a.get("name") or "", a.get("type") or "text"
            if name == "confirm":
                self.open.asks = True
            if not name or name == "csrfmiddlewaretoken":  # the test client needs no token
                return
            if tag == "input" and kind == "hidden":
                self.open.hidden[name] = a.get("value") or ""
            elif kind not in NOT_FILLED and name not in self.open.fields:
                self.open.fields.append(name)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self.open is not None:
            self.forms.append(self.open)
            self.open = None


def post_forms(html: str, page_url: str) -> list[PostForm]:
    parser = _Forms(page_url)
    parser.feed(html)
    parser.close()
    return parser.forms
