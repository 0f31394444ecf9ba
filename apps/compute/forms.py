from __future__ import annotations

from typing import Any

from django import forms


class WindowRequestForm(forms.Form):
    nodes = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple, label="Other groups' nodes",
        help_text="Your own node is included as rank 0 (the rendezvous master).",
    )  # fmt: skip
    starts_at = forms.DateTimeField(
        label="Start", widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="Course time. Must be in the future.",
    )  # fmt: skip
    ends_at = forms.DateTimeField(
        label="End", widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="Course time; the window is [start, end), at most the course's limit (48 h).",
    )  # fmt: skip
    purpose = forms.CharField(
        required=False, max_length=300, help_text="What the run is for; the other groups see it."
    )
    master_port = forms.IntegerField(
        initial=29500, min_value=1024, max_value=65535, help_text="torchrun rendezvous port."
    )

    def __init__(self, *args: Any, node_choices: list[tuple[str, str]], **kwargs: Any) -> None:
        """Validate inside `timezone.override(course.timezone)`: the datetime fields read the
        browser's local-time input in the active zone."""
        super().__init__(*args, **kwargs)
        self.fields["nodes"].choices = node_choices  # type: ignore[attr-defined]
