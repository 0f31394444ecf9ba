from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from django import forms


class CreateGroupForm(forms.Form):
    name = forms.CharField(
        max_length=80,
        help_text="Unique in the course; you can rename it until the formation deadline.",
    )


class JoinGroupForm(forms.Form):
    code = forms.CharField(
        label="Join code",
        max_length=20,
        help_text="8 letters and digits from a member of the group; case and dashes do not matter.",
    )


class RenameGroupForm(forms.Form):
    name = forms.CharField(label="New name", max_length=80, help_text="Unique in the course.")


class MoveForm(forms.Form):
    user = forms.IntegerField(widget=forms.HiddenInput)
    group = forms.TypedChoiceField(
        coerce=int, label="Move to", help_text="The student leaves their current group, if any."
    )

    def __init__(self, *args: Any, groups: Iterable[Any] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["group"]).choices = [
            (g.pk, f"{g.name} ({g.size})") for g in groups
        ]


class MergeForm(forms.Form):
    source = forms.TypedChoiceField(
        coerce=int, label="Merge", help_text="Every member of this group moves…"
    )
    target = forms.TypedChoiceField(
        coerce=int, label="into", help_text="…into this one; the first group is then dissolved."
    )

    def __init__(self, *args: Any, groups: Iterable[Any] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [(g.pk, f"{g.name} ({g.size})") for g in groups]
        cast(forms.ChoiceField, self.fields["source"]).choices = choices
        cast(forms.ChoiceField, self.fields["target"]).choices = choices
