from __future__ import annotations

from typing import Any

from django import forms


def name_zone(form: forms.Form, zone: str) -> None:
    """Every date-time field's label names the course's zone ('Start (America/Los_Angeles)')."""
    for field in form.fields.values():
        if isinstance(field, forms.DateTimeField):
            field.label = f"{field.label} ({zone})"


class WindowRequestForm(forms.Form):
    nodes = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        label="Other groups' nodes",
        help_text="Your own node is included as rank 0 (the rendezvous master).",
    )
    starts_at = forms.DateTimeField(
        label="Start",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="Course time. Must be in the future.",
    )
    ends_at = forms.DateTimeField(
        label="End",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="Course time; the window is [start, end), at most the course's limit (48 h).",
    )
    purpose = forms.CharField(
        required=False, max_length=300, help_text="What the run is for; the other groups see it."
    )
    master_port = forms.IntegerField(
        initial=29500, min_value=1024, max_value=65535, help_text="torchrun rendezvous port."
    )

    def __init__(
        self, *args: Any, node_choices: list[tuple[str, str]], zone: str, **kwargs: Any
    ) -> None:
        """Validate inside `timezone.override(course.timezone)`: the datetime fields read the
        browser's local-time input in the active zone, which their labels name."""
        super().__init__(*args, **kwargs)
        self.fields["nodes"].choices = node_choices  # type: ignore[attr-defined]
        name_zone(self, zone)


class IncidentForm(forms.Form):
    node = forms.TypedChoiceField(
        coerce=int, help_text="Your group's node, or one shared with it in a window."
    )
    occurred_at = forms.DateTimeField(
        label="When it happened",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="Course time, as close as you know.",
    )
    summary = forms.CharField(
        max_length=200, help_text="One line, e.g. 'NCCL timeout on rank 3 after 20 min'."
    )
    job_ids = forms.CharField(
        required=False, max_length=500, label="Job IDs", help_text="Comma separated."
    )
    logs = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text="Paste the lines around the error (at most 1 MB).",
    )
    repro = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="How to reproduce",
        help_text="The command and config, briefly.",
    )

    def __init__(
        self,
        *args: Any,
        node_choices: list[tuple[int, str]],
        zone: str,
        staff: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["node"].choices = node_choices  # type: ignore[attr-defined]
        if staff:
            self.fields["node"].help_text = "Any of the course's nodes, e.g. one found failing."
        name_zone(self, zone)


class RunRecordForm(forms.Form):
    title = forms.CharField(
        max_length=120, help_text="A name for the run, e.g. “2-node FSDP, bs 512, seq 4k”."
    )
    repository = forms.CharField(
        max_length=300, help_text="Where the code lives, e.g. https://github.com/team/project."
    )
    commit = forms.CharField(
        max_length=40,
        help_text="The commit the run used (git rev-parse HEAD): 7 to 40 hexadecimal characters.",
    )
    config_file = forms.FileField(
        required=False,
        label="Configuration file",
        help_text="The YAML/JSON the run read (at most 256 KB); its SHA-256 is kept with it.",
    )
    config_text = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        label="…or the configuration as text",
        help_text="Flags or config pasted here, when there is no file.",
    )
    seed = forms.CharField(
        required=False, max_length=20, help_text="The random seed the run logged (a whole number)."
    )
    artifacts = forms.CharField(
        required=False, max_length=500, help_text="Where checkpoints and logs are, e.g. gs://…"
    )
    nodes = forms.CharField(
        required=False, max_length=300, help_text="The nodes it ran on, e.g. node-1, node-3."
    )
    window = forms.TypedChoiceField(
        coerce=int,
        required=False,
        empty_value=None,
        label="Sharing window",
        help_text="The window the run belongs to, if it borrowed other groups' nodes.",
    )
    notes = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Anything else needed to run it again (environment, data version).",
    )

    def __init__(self, *args: Any, window_choices: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["window"].choices = [("", "— none —"), *window_choices]  # type: ignore[attr-defined]
