"""The EE 290 onboarding questionnaire: what the syllabus asks students at the first lecture
(research directions, time, GPU and distributed experience, teammates)."""

from __future__ import annotations

from typing import Any

RESEARCH_DIRECTIONS = [
    "Parallelism and distributed training",
    "Pre-training data and recipes",
    "Optimizers",
    "Post-training and RL",
    "Efficient inference and serving",
    "Quantization and pruning",
    "Agents and applications",
    "Safety and guardrails",
    "Diffusion language models",
    "Multi-agent systems",
]

QUESTIONS: list[dict[str, Any]] = [
    {
        "key": "interests",
        "kind": "multiple",
        "role": "interests",
        "options": RESEARCH_DIRECTIONS,
        "prompt": "Which research directions interest you?",
        "help": "Pick any; groups are suggested from shared interests.",
    },
    {
        "key": "hours",
        "kind": "single",
        "options": ["under 8", "8–12", "12–16", "over 16"],
        "prompt": "How many hours a week can you give this course?",
    },
    {
        "key": "gpu",
        "kind": "scale",
        "prompt": "Your experience with GPU programming (1 none – 5 wrote CUDA kernels)",
    },
    {
        "key": "distributed",
        "kind": "scale",
        "prompt": "Your experience with distributed training (1 none – 5 ran multi-node jobs)",
    },
    {
        "key": "teammates",
        "kind": "teammates",
        "role": "teammates",
        "required": False,
        "prompt": "Who would you like to work with?",
        "help": "Their course e-mails, comma-separated. A wish both of you make is kept when "
        "groups are suggested.",
    },
    {
        "key": "notes",
        "kind": "text",
        "required": False,
        "prompt": "Anything staff should know (enrollment, compute needs)?",
    },
]
