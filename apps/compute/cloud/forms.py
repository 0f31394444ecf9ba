"""The stop form: what happens to the node's Local SSD data (keep by default; staff may discard
it, after ticking that they understand what is lost)."""

from __future__ import annotations

from typing import Any, cast

from django import forms

from apps.compute.localssd import describe


class NodeStopForm(forms.Form):
    local_ssd = forms.ChoiceField(
        label="Local SSD data",
        choices=[("keep", "Keep it"), ("discard", "Discard it")],
        initial="keep",
        required=False,  # not sent (an older form, a script): keep, the safe side
        widget=forms.RadioSelect,
        help_text="Keeping it is billed while the node is stopped; discarding it cannot be undone.",
    )
    confirm = forms.BooleanField(
        required=False,
        label="I understand the Local SSD data is lost for good",
        help_text="Needed only to discard.",
    )

    def __init__(self, *args: Any, may_discard: bool, gb: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        size = describe(gb) if gb else "the node's Local SSD"
        choice = cast(forms.ChoiceField, self.fields["local_ssd"])
        choice.choices = [
            ("keep", f"Keep it ({size} stays for when the node starts again)"),
            ("discard", f"Discard it ({size} of scratch data is lost)"),
        ][: 2 if may_discard else 1]
        if not may_discard:
            self.fields["local_ssd"].help_text = "Only staff may discard a node's Local SSD data."
            del self.fields["confirm"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("local_ssd") == "discard" and not data.get("confirm"):
            self.add_error("confirm", "Tick this to discard the Local SSD data, or keep it.")
        return data

    @property
    def discard(self) -> bool:
        return self.cleaned_data.get("local_ssd") == "discard"
