from __future__ import annotations

from collections.abc import Iterable
from typing import Any

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


class _GroupByName(forms.CharField):
    """A group typed by name (a datalist offers every name) or given by id."""


def _resolve(value: str, groups: dict[str, int], ids: set[int]) -> int:
    text = (value or "").strip()
    if text.isdigit() and int(text) in ids:
        return int(text)
    found = groups.get(text.lower())
    if found is None:
        raise forms.ValidationError(f"There is no group called {text!r}.")
    return found


class _GroupsForm(forms.Form):
    def __init__(self, *args: Any, groups: Iterable[Any] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        pairs = [(g.pk, g.name) for g in groups]
        self._by_name = {name.lower(): pk for pk, name in pairs}
        self._ids = {pk for pk, _ in pairs}


class MoveForm(_GroupsForm):
    user = forms.IntegerField(widget=forms.HiddenInput)
    group = _GroupByName(
        label="Move to",
        max_length=80,
        help_text="Type a group's name; the student leaves their current group, if any.",
    )

    def clean_group(self) -> int:
        return _resolve(self.cleaned_data.get("group", ""), self._by_name, self._ids)


class MergeForm(_GroupsForm):
    source = _GroupByName(
        label="Merge", max_length=80, help_text="Every member of this group moves…"
    )
    target = _GroupByName(
        label="into", max_length=80, help_text="…into this one; the first group is then dissolved."
    )

    def clean_source(self) -> int:
        return _resolve(self.cleaned_data.get("source", ""), self._by_name, self._ids)

    def clean_target(self) -> int:
        return _resolve(self.cleaned_data.get("target", ""), self._by_name, self._ids)
