from __future__ import annotations

from django import forms

from apps.integrity.archive import MAX_UPLOAD_BYTES


class UploadForm(forms.Form):
    title = forms.CharField(max_length=200, help_text="What is compared, e.g. “A2 code”.")
    archive = forms.FileField(
        label="Submissions (.zip)",
        help_text="Gradescope's “Export submissions” zip of the assignment (with its "
        "submission_metadata.yml), or a zip with one folder (or one .zip) per group, named as "
        f"the group. At most {MAX_UPLOAD_BYTES // (1024 * 1024)} MiB.",
    )
    starter = forms.FileField(
        required=False,
        label="Starter code (.zip)",
        help_text="The code every group was given: what matches it is ignored. Optional.",
    )
    milestone = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        help_text="The milestone whose declared sources and AI use are shown beside each group.",
    )
    threshold = forms.IntegerField(
        min_value=5,
        max_value=100,
        initial=50,
        label="Flag at (%)",
        help_text="Pairs whose best-matching file matches at least this share are flagged.",
    )

    def __init__(self, *args: object, milestones: list[tuple[int, str]], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["milestone"].choices = [("", "none"), *milestones]  # type: ignore[attr-defined]
