"""What a validated LTI launch does: find the linked course (or let an instructor link it once),
find the person by their LMS identity, give them the role the LMS says in that course only, log
them in.

An LMS identity is (registration, deployment, `sub`), linked once to one account (`LtiAccount`).
The e-mail a launch carries is what the platform says, so it picks an account only where that
can hurt nobody: no account has it yet (a new person), or its account is a learner already on
the launched course's roster and known only to courses linked to this platform. The address must
pass the one e-mail rule of every first link (`apps.core.emails.first_link_email`: NFKC, one
script, valid IDNA), and a membership staff ended is never re-activated by a launch. Anyone
else — a site administrator, course staff anywhere, a member of a course this platform is not
linked to, an account linked to another LMS identity, an account not on the launched course's
roster — signs in to courseops first (password or campus sign-on) and confirms "link this LMS
account" once (`account_confirm`); until then a launch gives no session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.core.emails import EmailRefused, canonical_email, first_link_email
from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.lifecycle import StudentsEnrolled, publish
from apps.core.models import STAFF_ROLES, Course, Membership, Role, User
from apps.core.services import audit_record
from apps.lti.models import LtiAccount, LtiIdentity, LtiLink, LtiNonce, LtiSeat
from apps.lti.roles import course_role

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"


@dataclass(frozen=True)
class Launch:
    """The parts of a validated launch courseops uses."""

    issuer: str
    client_id: str
    deployment_id: str
    context_id: str
    context_title: str
    email: str
    name: str
    role: str | None
    nonce: str
    sub: str = ""
    nrps_url: str = ""
    lineitems_url: str = ""
    email_problem: str = ""  # why the address may link nobody (`first_link_email`), or ""

    @classmethod
    def from_claims(cls, data: dict[str, Any]) -> Launch:
        context = data.get(CLAIM + "context") or {}
        aud = data.get("aud")
        raw_email = str(data.get("email") or "")
        try:
            email, problem = (first_link_email(raw_email), "") if raw_email.strip() else ("", "")
        except EmailRefused as exc:
            email, problem = canonical_email(raw_email), str(exc)
        return cls(
            issuer=str(data.get("iss", "")),
            client_id=str(aud[0] if isinstance(aud, list) else aud or ""),
            deployment_id=str(data.get(CLAIM + "deployment_id", "")),
            context_id=str(context.get("id", "")),
            context_title=str(context.get("title") or context.get("label") or ""),
            email=email,
            name=str(data.get("name") or "").strip(),
            role=course_role(data.get(CLAIM + "roles") or []),
            nonce=str(data.get("nonce", "")),
            sub=str(data.get("sub", "")),
            nrps_url=str((data.get(NRPS_CLAIM) or {}).get("context_memberships_url", "")),
            lineitems_url=str((data.get(AGS_CLAIM) or {}).get("lineitems", "")),
            email_problem=problem,
        )


def use_nonce(launch: Launch) -> None:
    """A launch's id_token is good once: the database refuses its nonce the second time."""
    try:
        with transaction.atomic():
            LtiNonce.objects.create(issuer=launch.issuer, nonce=launch.nonce)
    except IntegrityError:
        raise Conflict("This launch was already used; launch again from the LMS.") from None


def link_for(tool_id: int, launch: Launch) -> LtiLink | None:
    return (
        LtiLink.objects.select_related("course")
        .filter(tool_id=tool_id, deployment_id=launch.deployment_id, context_id=launch.context_id)
        .first()
    )


def remember(link: LtiLink, launch: Launch) -> None:
    """Each launch refreshes where the LMS's services are and who its user id is."""
    fields = {}
    if launch.nrps_url and launch.nrps_url != link.nrps_url:
        fields["nrps_url"] = launch.nrps_url[:500]
    if launch.lineitems_url and launch.lineitems_url != link.lineitems_url:
        fields["lineitems_url"] = launch.lineitems_url[:500]
    if fields:
        LtiLink.objects.filter(pk=link.pk).update(**fields)
    if launch.sub and launch.email:
        LtiIdentity.objects.update_or_create(
            tool_id=link.tool_id, sub=launch.sub, defaults={"email": launch.email}
        )
        LtiSeat.objects.get_or_create(link=link, sub=launch.sub)


def link_create(*, actor: User, tool_id: int, launch: Launch, course: Course) -> LtiLink:
    """An instructor links the LMS course they launched from to a courseops course they teach."""
    if launch.role != Role.INSTRUCTOR:
        raise NotAllowed("Only the LMS course's instructor links it to courseops.")
    if not Membership.objects.filter(
        user=actor, course=course, role=Role.INSTRUCTOR, is_active=True
    ).exists():
        raise NotAllowed("You can link only a courseops course you teach.")
    try:
        with transaction.atomic():
            link = LtiLink.objects.create(
                tool_id=tool_id,
                deployment_id=launch.deployment_id,
                context_id=launch.context_id,
                context_title=launch.context_title[:255],
                course=course,
                linked_by=actor,
            )
            remember(link, launch)
            audit_record(
                actor=actor,
                action="lti.linked",
                course=course,
                obj=link,
                after={"lms_course": launch.context_title, "issuer": launch.issuer},
            )
    except IntegrityError:
        raise Conflict("That LMS course is already linked.") from None
    return link


class NeedsLink(DomainError):
    """The launch's identity is not linked and its e-mail may not pick the account: the person
    signs in to courseops and confirms the link (`account_confirm`)."""


def account_for(tool_id: int, launch: Launch) -> User | None:
    """The account this LMS identity is linked to, if any."""
    if not launch.sub:
        return None
    found = (
        LtiAccount.objects.select_related("user")
        .filter(tool_id=tool_id, deployment_id=launch.deployment_id, sub=launch.sub)
        .first()
    )
    if found is not None and not found.user.is_active:
        raise NotAllowed("Your courseops account is closed; ask the course staff.")
    return found.user if found else None


def why_not_by_email(user: User, tool_id: int, course: Course | None = None) -> str:
    """Why a launch's e-mail may not sign in this existing account by itself ("" if it may):
    only a learner already on this course's roster, known to no course this LMS is not linked
    to, is. An address never enrols an existing account into a course it is not on: the LMS
    roster sync proposes that to staff."""
    if user.is_superuser or user.is_staff:
        return "it is a site administrator's account"
    if Membership.objects.filter(user=user, role__in=STAFF_ROLES).exists():
        return "it belongs to course staff"
    linked = LtiLink.objects.filter(tool_id=tool_id).values("course_id")
    if Membership.objects.filter(user=user).exclude(course_id__in=linked).exists():
        return "it belongs to a course this LMS is not linked to"
    if LtiAccount.objects.filter(tool_id=tool_id, user=user).exists():
        return "it is linked to another account of this LMS"
    if (
        course is not None
        and not Membership.objects.filter(user=user, course=course, is_active=True).exists()
    ):
        return f"it is not on the roster of {course.title}"
    return ""


def _new_account(tool_id: int, launch: Launch, user: User, how: str, actor: User | None) -> None:
    try:
        with transaction.atomic():
            account = LtiAccount.objects.create(
                tool_id=tool_id,
                deployment_id=launch.deployment_id,
                sub=launch.sub,
                user=user,
                how=how,
            )
            audit_record(
                actor=actor,
                action="lti.account_linked",
                obj=account,
                after={"issuer": launch.issuer, "sub": launch.sub, "how": how},
            )
    except IntegrityError:
        raise Conflict(
            "This LMS account, or your courseops account, is already linked to another one."
        ) from None


def _require_sub(launch: Launch) -> None:
    if not launch.sub:
        raise DomainError("The LMS did not send who you are (sub); launch again from the LMS.")


def account_confirm(*, actor: User, tool_id: int, launch: Launch) -> User:
    """The person signed in to courseops links the LMS identity they launched with, once."""
    _require_sub(launch)
    linked = account_for(tool_id, launch)
    if linked is not None:
        if linked.pk != actor.pk:
            raise Conflict("This LMS account is already linked to another courseops account.")
        return actor
    if LtiAccount.objects.filter(
        tool_id=tool_id, deployment_id=launch.deployment_id, user=actor
    ).exists():
        raise Conflict("Your courseops account is already linked to another account of this LMS.")
    _new_account(tool_id, launch, actor, LtiAccount.How.CONFIRMED, actor)
    return actor


def _not_ended(user: User, course: Course) -> None:
    """A membership staff ended stays ended: a launch never re-activates it."""
    if Membership.objects.filter(user=user, course=course, is_active=False).exists():
        raise NotAllowed(
            f"The course staff ended your membership of {course.title}; a launch from the LMS "
            "does not bring it back. Ask the course's staff if that is a mistake."
        )


def person_for(launch: Launch, course: Course, tool_id: int) -> User:
    """The account of a launch from a linked LMS course (see the module for whom an e-mail may
    pick), made when nobody has the address yet. The person gets the LMS role in this course
    unless they already have one (a role set in courseops is never lowered by a launch). A
    membership staff ended stays ended (NotAllowed), an address `first_link_email` refuses
    links nobody, and an existing account is enrolled by address only if it is already on this
    course's roster; otherwise `NeedsLink`: the person signs in and confirms first."""
    _require_sub(launch)
    if launch.role is None:
        raise NotAllowed("Your role in the LMS course has no place in courseops.")
    with transaction.atomic():
        user = account_for(tool_id, launch)
        if user is None:
            if launch.email_problem:
                raise NotAllowed(
                    f"courseops links nobody by this address: {launch.email_problem} Ask the "
                    "LMS's admin to correct it, or the course staff to add you."
                )
            if not launch.email:
                raise DomainError(
                    "The LMS did not send your e-mail address; ask its admin to share it with "
                    "courseops (the tool's privacy level must include e-mail)."
                )
            user = User.objects.filter(email=launch.email).first()
            if user is None:  # no password: they come in through the LMS or the campus sign-on
                user = User.objects.create_user(email=launch.email, full_name=launch.name)
                _new_account(tool_id, launch, user, LtiAccount.How.NEW, None)
            else:
                _not_ended(user, course)
                why = why_not_by_email(user, tool_id, course)
                if why:
                    raise NeedsLink(
                        f"courseops has an account for {launch.email}, but {why}, so a launch "
                        "alone does not sign it in. Sign in to courseops, then link this LMS "
                        "account once (or ask the course staff: the LMS roster sync proposes "
                        "the people it lists)."
                    )
                _new_account(tool_id, launch, user, LtiAccount.How.FIRST_LAUNCH, None)
        _not_ended(user, course)
        membership, made = Membership.objects.get_or_create(
            user=user, course=course, defaults={"role": launch.role}
        )
        if made:
            if membership.role == Role.STUDENT:
                publish(
                    StudentsEnrolled(
                        course=course, actor=None, at=timezone.now(), user_ids=(user.pk,)
                    )
                )
            audit_record(
                actor=None,
                action="lti.member_added",
                course=course,
                obj=membership,
                after={"email": user.email, "role": membership.role, "issuer": launch.issuer},
            )
    return user
