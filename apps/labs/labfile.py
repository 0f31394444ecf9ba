"""A lab is a YAML file in courses/labs/: steps, each with a prediction the student locks, an
instrument (one of `instruments.INSTRUMENTS`) pre-filled for the step, and a reflection.

Pure: no database. `parse_lab(text)` checks the whole file at once and raises `LabFileError`
naming every problem with its key path; a numeric prediction whose answer is "what the
instrument gives for these inputs" is computed here, so the key and the instrument cannot
disagree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from apps.labs.instruments import INSTRUMENTS, InputError

LABS = Path(__file__).resolve().parents[2] / "courses" / "labs"


class LabFileError(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Option:
    key: str
    text: str


@dataclass(frozen=True)
class Input:
    key: str
    label: str
    kind: str  # number | choice
    default: Any
    help: str = ""
    min: float | None = None
    max: float | None = None
    step: float | None = None


@dataclass
class Step:
    number: int  # 1-based
    act: str
    title: str
    text: str
    kind: str  # choice | number
    prompt: str
    options: list[Option]
    unit: str
    answer: Any  # the option key, or the number
    tolerance: float  # relative, for a number
    model: str
    constants: dict[str, Any]
    labels: dict[str, str]
    inputs: list[Input]
    defaults: dict[str, Any]
    reflection_prompt: str
    reflection_options: list[Option] = field(default_factory=list)
    reflection_answer: str = ""
    reflection_text: bool = False

    def run(self, given: dict[str, Any] | None = None) -> dict[str, Any]:
        """The instrument's figures for `given` inputs (missing ones take the step's defaults)."""
        return INSTRUMENTS[self.model](self.constants, {**self.defaults, **(given or {})})

    def choices_for(self, key: str) -> list[tuple[str, str]]:
        """(value, label) of a choice input: the instrument's labelled components."""
        return list(self.labels.items()) if key == "target" else []


@dataclass
class Lab:
    key: str
    title: str
    summary: str
    contexts: list[dict[str, str]]
    hardware: dict[str, float]
    steps: list[Step]
    bank: str = ""  # the key of a question bank with the lab's numbers, per student

    def step(self, number: int) -> Step | None:
        return self.steps[number - 1] if 1 <= number <= len(self.steps) else None


def _options(raw: Any, where: str, problems: list[str]) -> list[Option]:
    if not isinstance(raw, list) or not raw:
        problems.append(f"{where}: a list of options is needed")
        return []
    out = []
    for i, o in enumerate(raw):
        if not isinstance(o, dict) or not o.get("key") or not o.get("text"):
            problems.append(f"{where}[{i}]: each option needs a key and a text")
            continue
        out.append(Option(str(o["key"]), str(o["text"])))
    return out


def parse_lab(text: str) -> Lab:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise LabFileError([f"not YAML: {exc}"]) from None
    if not isinstance(data, dict):
        raise LabFileError(["the file must be a mapping with key, title and steps"])
    problems: list[str] = [f"{k}: missing" for k in ("key", "title", "steps") if not data.get(k)]
    steps: list[Step] = []
    models: dict[int, tuple[str, dict[str, Any], dict[str, str], list[Input]]] = {}
    for n, raw in enumerate(data.get("steps") or [], start=1):
        where = f"steps[{n - 1}]"
        if not isinstance(raw, dict):
            problems.append(f"{where}: a mapping is needed")
            continue
        pred = raw.get("prediction") or {}
        inst = raw.get("instrument") or {}
        refl = raw.get("reflection") or {}
        kind = pred.get("kind")
        if kind not in ("choice", "number"):
            problems.append(f"{where}.prediction.kind: choice or number")
        options = (
            _options(pred.get("options"), f"{where}.prediction.options", problems)
            if (kind == "choice")
            else []
        )
        if "same_as" in inst:
            src = models.get(int(inst["same_as"]))
            if src is None:
                problems.append(f"{where}.instrument.same_as: no earlier step {inst['same_as']}")
                continue
            model, constants, labels, inputs = src
        else:
            model = str(inst.get("model", ""))
            if model not in INSTRUMENTS:
                problems.append(
                    f"{where}.instrument.model: {model!r} is not one of {', '.join(INSTRUMENTS)}"
                )
                continue
            constants = dict(inst.get("constants") or {})
            labels = {str(k): str(v) for k, v in (inst.get("labels") or {}).items()}
            inputs = [
                Input(
                    key=str(i["key"]),
                    label=str(i.get("label", i["key"])),
                    kind=str(i.get("kind", "number")),
                    default=i.get("default"),
                    help=str(i.get("help", "")),
                    min=i.get("min"),
                    max=i.get("max"),
                    step=i.get("step"),
                )
                for i in inst.get("inputs") or []
            ]
        models[n] = (model, constants, labels, inputs)
        defaults = {i.key: i.default for i in inputs} | dict(inst.get("defaults") or {})
        step = Step(
            number=n,
            act=str(raw.get("act", "")),
            title=str(raw.get("title", f"Step {n}")),
            text=str(raw.get("text", "")),
            kind=str(kind),
            prompt=str(pred.get("prompt", "")),
            options=options,
            unit=str(pred.get("unit", "")),
            answer=None,
            tolerance=float(pred.get("tolerance", 0.05)),
            model=model,
            constants=constants,
            labels=labels,
            inputs=inputs,
            defaults=defaults,
            reflection_prompt=str(refl.get("prompt", "")),
            reflection_options=_options(refl["options"], f"{where}.reflection.options", problems)
            if "options" in refl
            else [],
            reflection_answer=str(refl.get("answer", "")),
            reflection_text=bool(refl.get("text", False)),
        )
        try:
            step.run()
        except (InputError, KeyError, TypeError, ValueError) as exc:
            problems.append(f"{where}.instrument: the defaults do not run ({exc})")
            continue
        answer = pred.get("answer")
        if kind == "choice":
            if answer not in {o.key for o in options}:
                problems.append(f"{where}.prediction.answer: {answer!r} is not an option key")
            step.answer = answer
        elif isinstance(answer, dict) and "instrument" in answer:
            try:
                figures = step.run(dict(answer.get("inputs") or {}))
                step.answer = float(figures[answer["instrument"]])
            except (InputError, KeyError, TypeError, ValueError) as exc:
                problems.append(f"{where}.prediction.answer: the instrument gives no value ({exc})")
        elif isinstance(answer, int | float) and math.isfinite(float(answer)):
            step.answer = float(answer)
        elif kind == "number":
            problems.append(f"{where}.prediction.answer: a number or {{instrument: figure}}")
        if step.reflection_options and step.reflection_answer not in {
            o.key for o in step.reflection_options
        }:
            problems.append(f"{where}.reflection.answer: not an option key")
        steps.append(step)
    if problems:
        raise LabFileError(problems)
    return Lab(
        key=str(data["key"]),
        title=str(data["title"]),
        summary=str(data.get("summary", "")),
        contexts=list(data.get("contexts") or []),
        hardware=dict(data.get("hardware") or {}),
        steps=steps,
        bank=str(data.get("bank", "")),
    )


@cache
def shipped() -> dict[str, Lab]:
    """The labs in courses/labs/, by key (parsed once per process)."""
    labs = [parse_lab(p.read_text(encoding="utf-8")) for p in sorted(LABS.glob("*.yaml"))]
    return {lab.key: lab for lab in labs}
