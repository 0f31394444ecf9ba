"""An LMS course linked to a courseops course, and the launches already used.

The platform registrations and the tool's key pair are pylti1p3's own models
(`lti1p3_tool_config`: LtiTool, LtiToolKey). One courseops course may be linked to several LMS
courses (sections), each link its own row; a launch's nonce is recorded once, so a replayed
id_token is refused by the database."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.core.models import Course


class LtiLink(models.Model):
    tool = models.ForeignKey(
        "lti1p3_tool_config.LtiTool", on_delete=models.CASCADE, related_name="+"
    )
    deployment_id = models.CharField(max_length=255)
    context_id = models.CharField(max_length=255, help_text="The LMS course's id.")
    context_title = models.CharField(max_length=255, blank=True)
    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="lti_links")
    linked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    linked_at = models.DateTimeField(auto_now_add=True)
    nrps_url = models.URLField(
        max_length=500, blank=True, help_text="The LMS's membership service (from launches)."
    )
    lineitems_url = models.URLField(
        max_length=500, blank=True, help_text="The LMS's grade columns service (from launches)."
    )

    class Meta:
        ordering = ("course_id", "context_title")
        constraints = [
            models.UniqueConstraint(
                fields=["tool", "deployment_id", "context_id"], name="lti_link_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.context_title or self.context_id} → {self.course_id}"


class LtiNonce(models.Model):
    issuer = models.CharField(max_length=255)
    nonce = models.CharField(max_length=255)
    used_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "nonce"], name="lti_nonce_once")]

    def __str__(self) -> str:
        return f"{self.issuer} {self.nonce}"


class LtiIdentity(models.Model):
    """Who an LMS user id (`sub`) is, by e-mail: learned from launches and roster syncs, used to
    address scores."""

    tool = models.ForeignKey(
        "lti1p3_tool_config.LtiTool", on_delete=models.CASCADE, related_name="+"
    )
    sub = models.CharField(max_length=255)
    email = models.EmailField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tool", "sub"], name="lti_identity_once")]
        indexes = [models.Index(fields=["tool", "email"])]

    def __str__(self) -> str:
        return f"{self.sub} = {self.email}"


class LtiSync(models.Model):
    """One roster sync or grade push over one link: done only when every person went through;
    otherwise failed, naming each person not sent and why (and a retry sends only those)."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    link = models.ForeignKey(LtiLink, on_delete=models.CASCADE, related_name="syncs")
    kind = models.CharField(max_length=10, choices=[("roster", "Roster"), ("grades", "Grades")])
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    failures = models.JSONField(default=list, blank=True, help_text="[{name, email, why}]")

    class Meta:
        ordering = ("-started_at", "-id")

    def __str__(self) -> str:
        return f"{self.kind} sync {self.pk}: {self.status}"


class LtiScoreSent(models.Model):
    """The last score the LMS accepted for a person in a grade column: a push sends only what
    changed, so pushing twice changes nothing."""

    link = models.ForeignKey(LtiLink, on_delete=models.CASCADE, related_name="+")
    lineitem = models.CharField(max_length=500)
    sub = models.CharField(max_length=255)
    score = models.FloatField()
    maximum = models.FloatField()
    comment = models.CharField(max_length=500, blank=True)
    sent_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["link", "lineitem", "sub"], name="lti_score_once")
        ]

    def __str__(self) -> str:
        return f"{self.sub}: {self.score}/{self.maximum}"


class LtiSeat(models.Model):
    """An LMS user id enrolled in one linked LMS course (from its roster or a launch): grades go
    to each linked course for its own people only, so sections never disturb each other."""

    link = models.ForeignKey(LtiLink, on_delete=models.CASCADE, related_name="seats")
    sub = models.CharField(max_length=255)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["link", "sub"], name="lti_seat_once")]

    def __str__(self) -> str:
        return f"{self.sub} in {self.link_id}"


class LtiAccount(models.Model):
    """Which courseops account an LMS user is: the platform's registration (issuer + client),
    the deployment and the platform's user id (`sub`), linked once. A launch signs in only the
    account its identity is linked to; the e-mail it carries never picks an account by itself
    (`apps.lti.services.person_for` says when the first link is made)."""

    class How(models.TextChoices):
        NEW = "new", "Account made by the launch"
        FIRST_LAUNCH = "first-launch", "First launch of a learner only linked courses know"
        CONFIRMED = "confirmed", "Confirmed by the person, signed in to courseops"

    tool = models.ForeignKey(
        "lti1p3_tool_config.LtiTool", on_delete=models.CASCADE, related_name="+"
    )
    deployment_id = models.CharField(max_length=255)
    sub = models.CharField(max_length=255, help_text="The platform's id of the person.")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lti_accounts"
    )
    how = models.CharField(max_length=20, choices=How.choices)
    linked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tool", "deployment_id", "sub"], name="lti_account_once"
            ),
            models.UniqueConstraint(
                fields=["tool", "deployment_id", "user"], name="lti_account_one_per_person"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sub} → {self.user_id}"
