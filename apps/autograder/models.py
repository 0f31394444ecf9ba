"""Question sets, per-student instances, answers, grading runs, passes, chunks and grades.

A grading run grades every (student, question) of a set against the key as it was when the run
was created (`key_version`); changing the key makes a new run, and old runs stay readable.
Each time a run is graded is a *pass*: its students are cut into chunks, each chunk is marked
done in the same transaction as its grades, and the pass is done only when every one of *its*
chunks is. Grades are unique per (pass, student, question), written by upsert (a redelivered
chunk replaces, never duplicates). Readers see the run's `current_pass`, the last complete one,
so a re-grade in progress never shows a mix of old and new grades.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.calendar.models import Assignment
from apps.core.models import Course


class QuestionSet(models.Model):
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="question_sets")
    key = models.SlugField(max_length=60, help_text="e.g. mlsysim-quiz, a1-numbers")
    title = models.CharField(max_length=200)
    assignment = models.ForeignKey(
        Assignment,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Answers are accepted until the student's effective deadline for it.",
    )
    regrade_days = models.PositiveSmallIntegerField(
        default=7, help_text="Days after results are released that students may ask for regrades."
    )
    released_at = models.DateTimeField(
        null=True, blank=True, help_text="When students may see keys and worked solutions."
    )
    hide_names = models.BooleanField(
        default=False,
        help_text="Written answers are graded without the students' names or e-mails.",
    )
    practice = models.BooleanField(
        default=False,
        help_text="Practice: each check is graded at once against the student's own variant; "
        "never in the gradebook (the bank's `practice: true`).",
    )
    checks = models.PositiveSmallIntegerField(
        default=0,
        help_text="Graded sets: how many times a student may check each answer with feedback "
        "before the deadline (0: none; the bank's `checks: {allowed, keep}`).",
    )
    checks_keep = models.CharField(
        max_length=4,
        choices=[("best", "The best checked answer"), ("last", "The last answer")],
        default="last",
        help_text="Which answer is graded when checks are allowed.",
    )

    class Meta:
        ordering = ("course_id", "key")
        constraints = [
            models.UniqueConstraint(fields=["course", "key"], name="question_set_key_unique")
        ]

    def __str__(self) -> str:
        return self.title


class Question(models.Model):
    class Kind(models.TextChoices):
        NUMERIC = "numeric", "Numeric"
        MULTIPART = "multipart", "Multi-part numeric"
        CHOICE = "choice", "Multiple choice"
        WRITTEN = "written", "Short written answer"

    question_set = models.ForeignKey(
        QuestionSet, on_delete=models.CASCADE, related_name="questions"
    )
    key = models.SlugField(max_length=20, help_text="Column name in CSVs, e.g. q6.")
    position = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=12, choices=Kind.choices)
    prompt = models.TextField()
    goal = models.CharField(max_length=20, blank=True, help_text="Understanding goal, e.g. U1.")
    points = models.FloatField(default=1)
    params = models.JSONField(
        default=dict,
        blank=True,
        help_text='Fixed values or draws: {"n": {"range": [8, 64], "step": 8}}.',
    )
    parts = models.JSONField(
        default=list,
        blank=True,
        help_text='Numeric parts: [{"label": "INT4 GPUs", "answer": "expr", "unit": ""}].',
    )
    rel_tol = models.FloatField(
        default=0.02, help_text="Relative tolerance for full credit (0.02 = 2 %)."
    )
    abs_tol = models.FloatField(default=0.0)
    partial = models.JSONField(
        default=list, blank=True, help_text='Extra bands: [{"fraction": 0.5, "rel": 0.2}].'
    )
    rubric = models.CharField(
        max_length=20,
        default="mean",
        help_text="'mean' of parts, or 'two_part' (2 both, 1 one or both within the partial band).",
    )
    options = models.JSONField(
        default=list,
        blank=True,
        help_text='[{"label": "a", "text": "...", "correct": false, "misconception": "..."}]',
    )
    rubric_spec = models.JSONField(
        default=dict,
        blank=True,
        help_text='The bank\'s declared rubric: {"name", "text", "unit_slip"} (empty: the base '
        "rule's own wording).",
    )
    grader = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The staff member who grades this written question (empty: anyone).",
    )

    class Meta:
        ordering = ("question_set_id", "position")
        constraints = [
            models.UniqueConstraint(fields=["question_set", "key"], name="question_key_unique")
        ]

    def __str__(self) -> str:
        return f"{self.question_set.key}/{self.key}"


class Instance(models.Model):
    """A student's drawn parameters and key for a question with per-student parameters."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="instances")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    seed = models.BigIntegerField()
    params = models.JSONField()
    keys = models.JSONField(help_text="One key per numeric part.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["question", "student"], name="one_instance")]

    def __str__(self) -> str:
        return f"{self.question} for {self.student_id}"


class PracticeVariant(models.Model):
    """Which variant of a practice question a student is on (0: their own instance; each "new
    variant" draws fresh numbers from the next seed)."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="+")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    number = models.PositiveIntegerField(default=0)
    solution_shown_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When this variant's correct value and worked solution were shown (after the "
        "course's number of wrong checks, or on request); a new variant clears it.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["question", "student"], name="one_practice_variant")
        ]

    def __str__(self) -> str:
        return f"{self.question} v{self.number} for {self.student_id}"


class PracticeAttempt(models.Model):
    """One check of a practice answer, graded at once with the graded sets' parser and rubric."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="+")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    variant = models.PositiveIntegerField(default=0)
    answers = models.JSONField(help_text="The raw answer of each part, as typed.")
    fraction = models.FloatField()
    points = models.FloatField()
    detail = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-at", "-pk")
        indexes = [models.Index(fields=["student", "question"])]

    def __str__(self) -> str:
        return f"{self.question} by {self.student_id}: {self.fraction:.2f}"


class Answer(models.Model):
    class Status(models.TextChoices):
        OK = "ok", "Answered"
        BLANK = "blank", "No answer"
        UNPARSEABLE = "unparseable", "Unparseable"

    # No index of its own: the unique (question, student, part) index leads with it, and every
    # index less is one less to write for each of a term's hundreds of thousands of answers.
    question = models.ForeignKey(
        Question, on_delete=models.CASCADE, related_name="answers", db_index=False
    )
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    part = models.PositiveSmallIntegerField(default=0)
    raw = models.CharField(max_length=500, blank=True)
    text = models.TextField(
        blank=True, help_text="A written answer in full (raw holds its first 500 characters)."
    )
    value = models.FloatField(null=True, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices)
    source = models.CharField(max_length=20, default="form")
    submitted_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["question", "student", "part"], name="one_answer_per_part"
            )
        ]

    def __str__(self) -> str:
        return f"{self.question} part {self.part}: {self.raw!r}"


class RubricItem(models.Model):
    """One line of a written question's rubric (Gradescope-style): a score change (positive
    adds to 0, negative takes from full marks, as the question's scoring says) and the comment
    the student reads. Changing it re-scores every answer it is applied to."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="rubric_items")
    key = models.SlugField(max_length=30, help_text="Stable name, e.g. names-bottleneck.")
    position = models.PositiveSmallIntegerField(default=0)
    points = models.FloatField(help_text="Score change when applied, e.g. 1 or -0.5.")
    comment = models.TextField(help_text="What the student reads when it is applied.")

    class Meta:
        ordering = ("question_id", "position", "pk")
        constraints = [
            models.UniqueConstraint(fields=["question", "key"], name="rubric_item_key_unique")
        ]

    def __str__(self) -> str:
        return f"{self.question}: {self.key} ({self.points:+g})"


class RubricMark(models.Model):
    """A rubric item applied to one student's written answer."""

    item = models.ForeignKey(RubricItem, on_delete=models.CASCADE, related_name="marks")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    applied_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    applied_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["item", "student"], name="rubric_mark_once")]
        indexes = [models.Index(fields=["student", "item"])]

    def __str__(self) -> str:
        return f"{self.item} on {self.student_id}"


class GradingRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    question_set = models.ForeignKey(QuestionSet, on_delete=models.CASCADE, related_name="runs")
    key_version = models.CharField(
        max_length=64, help_text="Hash of the questions' keys and tolerances."
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    expected = models.PositiveIntegerField(
        default=0, help_text="Grades this run will hold when done."
    )
    chunk_size = models.PositiveIntegerField(default=500)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    current_pass = models.ForeignKey(
        "GradingPass",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The last complete pass: the grades every reader sees.",
    )

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return f"run #{self.pk} of {self.question_set}"


class GradingPass(models.Model):
    """One grading of a run. Done means every chunk of this pass finished; at most one pass of a
    run is queued or running at a time (a partial unique index), so two re-grades started at
    once end as one."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    IN_PROGRESS = (Status.QUEUED, Status.RUNNING)

    run = models.ForeignKey(GradingRun, on_delete=models.CASCADE, related_name="passes")
    number = models.PositiveIntegerField(help_text="1 for a run's first pass, then 2, 3, …")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    expected = models.PositiveIntegerField(default=0, help_text="Grades this pass writes.")
    done = models.PositiveIntegerField(default=0, help_text="Grades written so far.")
    failed_students = models.JSONField(default=list, blank=True)
    note = models.CharField(max_length=300, blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Last sign of a worker on it (start, a chunk begun or done).",
    )
    takeovers = models.PositiveSmallIntegerField(
        default=0, help_text="Times the sweeper queued it again after its workers went silent."
    )

    class Meta:
        ordering = ("-number",)
        constraints = [
            models.UniqueConstraint(fields=["run", "number"], name="one_pass_number_per_run"),
            models.UniqueConstraint(
                fields=["run"],
                condition=models.Q(status__in=["queued", "running"]),
                name="one_pass_in_progress_per_run",
            ),
            models.CheckConstraint(
                condition=models.Q(chunks_done__lte=models.F("chunks_total")),
                name="pass_chunks_done_within_total",
            ),
        ]

    def __str__(self) -> str:
        return f"pass {self.number} of run #{self.run_id}"

    @property
    def in_progress(self) -> bool:
        return self.status in self.IN_PROGRESS


class PassChunk(models.Model):
    """A slice of a pass's students; `done` is set in the transaction that writes its grades,
    so a chunk redelivered after a worker died is graded once and counted once."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    grading_pass = models.ForeignKey(GradingPass, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    student_ids = models.JSONField(default=list)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(
        null=True, blank=True, help_text="Set when a worker starts it; past it, another takes over."
    )
    takeovers = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ("index",)
        constraints = [
            models.UniqueConstraint(fields=["grading_pass", "index"], name="one_chunk_per_index")
        ]

    def __str__(self) -> str:
        return f"chunk {self.index} of pass #{self.grading_pass_id}"


class Grade(models.Model):
    # The run is the pass's (`grading_pass.run`): a column of its own would be one more foreign
    # key checked and one more index written for each of a term's hundreds of thousands of grades.
    # No index of its own: (grading_pass, question) and the unique (grading_pass, student,
    # question) lead with it.
    grading_pass = models.ForeignKey(
        GradingPass, on_delete=models.CASCADE, related_name="grades", db_index=False
    )
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="grades")
    score = models.FloatField(help_text="Points earned.")
    max_points = models.FloatField()
    detail = models.JSONField(default=dict)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["grading_pass", "student", "question"], name="one_grade_per_answer_and_pass"
            )
        ]
        indexes = [models.Index(fields=["grading_pass", "question"])]

    def __str__(self) -> str:
        return f"{self.question}: {self.score}/{self.max_points}"


class AnswerUpload(models.Model):
    """An answers CSV stored by the web request and read by a Celery task: first a preview (the
    import run and rolled back: mapping, counts, every skipped row), then, when staff confirm, the
    same import committed. The request only stores the file, so a 120,000-row upload never holds
    a web worker; progress is kept in the cache while the task runs (`uploads.progress`)."""

    class Status(models.TextChoices):
        PREVIEWING = "previewing", "Reading the file"
        PREVIEWED = "previewed", "Preview ready"
        COMMITTING = "committing", "Storing the answers"
        COMMITTED = "committed", "Answers stored"
        FAILED = "failed", "Failed"

    question_set = models.ForeignKey(QuestionSet, on_delete=models.CASCADE, related_name="uploads")
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    filename = models.CharField(max_length=200)
    data = models.BinaryField(help_text="The file as uploaded (at most MAX_UPLOAD_BYTES).")
    rows = models.PositiveIntegerField(
        default=0, help_text="Data rows in the file (lines after the header)."
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PREVIEWING)
    report = models.JSONField(
        default=dict, blank=True, help_text="The preview's or the import's report."
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(
        null=True, blank=True, help_text="Set when queued; past it, the sweeper queues it again."
    )
    takeovers = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return f"{self.filename} → {self.question_set} ({self.status})"


class RegradeRequest(models.Model):
    """A student asks staff to look at one graded question again, with a reason, until the
    set's regrade window closes. A TA re-scores it (the new points stand in every later pass,
    the results, the gradebook and the exports) or declines it; both with a comment the
    student is e-mailed. At most one open request per student and question."""

    class Status(models.TextChoices):
        OPEN = "open", "Waiting for staff"
        RESCORED = "rescored", "Re-scored"
        DECLINED = "declined", "Declined"

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="regrades")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    part = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The part asked about (0-based); empty: the question."
    )
    reason = models.TextField(max_length=2000)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    old_points = models.FloatField(help_text="The points when the request was made.")
    new_points = models.FloatField(null=True, blank=True)
    comment = models.TextField(max_length=2000, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("created_at", "id")
        constraints = [
            models.UniqueConstraint(
                fields=["question", "student"],
                condition=models.Q(status="open"),
                name="one_open_regrade_per_question",
            ),
            models.CheckConstraint(
                condition=~models.Q(status="rescored") | models.Q(new_points__isnull=False),
                name="rescored_has_points",
            ),
        ]

    def __str__(self) -> str:
        return f"regrade {self.question.key} for {self.student} ({self.status})"


from apps.autograder.fair_models import (  # noqa: E402, F401
    AnswerGrader,
    GradingPolicy,
    SecondMark,
)
