"""Course-specific hardware profiles (e.g. what the course's own nodes measured)."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models

from apps.core.models import Course
from apps.perfcalc.calc.catalog import GPU, PRECISIONS


class CustomGPU(models.Model):
    """A GPU profile staff add for their course, beside the cited catalog. Shown to members of
    the course with key `custom:<key>` and its own source line."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="custom_gpus")
    key = models.SlugField(max_length=40, help_text="Short id, e.g. node3-measured.")
    name = models.CharField(max_length=120, help_text="e.g. ee290-node-3 H100 (measured)")
    source = models.CharField(
        max_length=300,
        help_text="Where the figures come from, e.g. 'nvbandwidth + GEMM sweep, Feb 2'.",
    )
    memory_gb = models.FloatField(validators=[MinValueValidator(0.001)], help_text="GB (10⁹ B).")
    bandwidth_gbs = models.FloatField(
        validators=[MinValueValidator(0.001)], help_text="Memory bandwidth in GB/s (10⁹ B/s)."
    )
    tdp_w = models.FloatField(default=0, validators=[MinValueValidator(0)], help_text="Watts.")
    peaks_tflops = models.JSONField(
        default=dict,
        help_text='Per precision, dense and optionally sparse TFLOPS: {"bf16": {"dense": 760}}.',
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("course_id", "name")
        verbose_name = "custom GPU profile"
        constraints = [
            models.UniqueConstraint(fields=["course", "key"], name="custom_gpu_key_unique")
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        peaks = self.peaks_tflops
        if not isinstance(peaks, dict) or not peaks:
            raise ValidationError(
                {"peaks_tflops": 'Give at least one precision, e.g. {"bf16": {"dense": 760}}.'}
            )
        for precision, modes in peaks.items():
            if precision not in PRECISIONS:
                raise ValidationError(
                    {"peaks_tflops": f"{precision!r} is not one of {', '.join(PRECISIONS)}."}
                )
            if not isinstance(modes, dict) or "dense" not in modes:
                raise ValidationError(
                    {"peaks_tflops": f"{precision}: give at least a dense figure."}
                )
            for kind, value in modes.items():
                if (
                    kind not in {"dense", "sparse"}
                    or not isinstance(value, int | float)
                    or value <= 0
                ):
                    raise ValidationError(
                        {"peaks_tflops": f"{precision}.{kind}: a positive TFLOPS number."}
                    )

    def to_gpu(self) -> GPU:
        return GPU(
            key=f"custom:{self.key}",
            name=f"{self.name} ({self.course.code})",
            source=self.source,
            memory_bytes=self.memory_gb * 1e9,
            bandwidth_bytes_per_s=self.bandwidth_gbs * 1e9,
            tdp_w=self.tdp_w,
            peaks={p: {k: v * 1e12 for k, v in m.items()} for p, m in self.peaks_tflops.items()},
            custom=True,
        )
