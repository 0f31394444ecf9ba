"""Forms of quotas and schedules per group: a group's opt-out request, staff's quota for a
group, and staff's reason for declining an opt-out."""

from __future__ import annotations

from typing import Any

from django import forms


class OptOutForm(forms.Form):
    night = forms.DateField(
        label="Night",
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="The date of the shutdown to skip (course time).",
        error_messages={"invalid": "Enter a date, e.g. 2026-03-04."},
    )
    reason = forms.CharField(
        max_length=300,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="What has to keep running through the night, and why (at most 300 characters).",
        error_messages={"required": "Say what has to keep running through the night."},
    )

    def __init__(self, *args: Any, when: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields[
            "night"
        ].help_text = (
            f"The date of the {when} shutdown to skip; your node keeps running through it."
        )


class GroupQuotaForm(forms.Form):
    group = forms.TypedChoiceField(
        coerce=int, help_text="The group whose quota you set.", label="Group"
    )
    gpu_hours = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=1_000_000,
        label="GPU-hours per period",
        help_text="Empty: the course file's quota again. 0: no quota for this group.",
    )
    note = forms.CharField(
        max_length=300,
        label="Why",
        help_text="Kept with the change in the audit log.",
        error_messages={"required": "Say why you change the group's quota."},
    )

    def __init__(self, *args: Any, groups: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["group"].choices = [(str(pk), name) for pk, name in groups]  # type: ignore[attr-defined]


class DeclineForm(forms.Form):
    note = forms.CharField(
        max_length=300,
        label="Reason",
        help_text="The group reads it in the e-mail.",
        error_messages={"required": "Say why, so the group knows what to do instead."},
    )
