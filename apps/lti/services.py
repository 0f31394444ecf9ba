"""What a validated LTI launch does: find the linked course (or let an instructor link it once),
find or make the person by the e-mail the LMS sends, give them the role the LMS says, log them
in. A person already signed in (password or campus sign-on) with the same e-mail keeps the same
account and session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.core.errors import Conflict, DomainError, NotAllowed
from apps.core.lifecycle import StudentsEnrolled, publish
from apps.core.models import Course, Membership, Role, User
from apps.core.services import audit_record
from apps.lti.models import LtiIdentity, LtiLink, LtiNonce, LtiSeat
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

    @classmethod
    def from_claims(cls, data: dict[str, Any]) -> Launch:
        context = data.get(CLAIM + "context") or {}
        aud = data.get("aud")
        return cls(
            issuer=str(data.get("iss", "")),
            client_id=str(aud[0] if isinstance(aud, list) else aud or ""),
            deployment_id=str(data.get(CLAIM + "deployment_id", "")),
            context_id=str(context.get("id", "")),
            context_title=str(context.get("title") or context.get("label") or ""),
            email=str(data.get("email") or "").strip(),
            name=str(data.get("name") or "").strip(),
            role=course_role(data.get(CLAIM + "roles") or []),
            nonce=str(data.get("nonce", "")),
            sub=str(data.get("sub", "")),
            nrps_url=str((data.get(NRPS_CLAIM) or {}).get("context_memberships_url", "")),
            lineitems_url=str((data.get(AGS_CLAIM) or {}).get("lineitems", "")),
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
            tool_id=link.tool_id, sub=launch.sub, defaults={"email": launch.email.lower()}
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


def instructor_for(launch: Launch) -> User | None:
    """The existing account of an LMS instructor who may link a course: one that teaches some
    courseops course (matched by e-mail, any case)."""
    if not launch.email:
        return None
    return (
        User.objects.filter(
            email__iexact=launch.email,
            is_active=True,
            memberships__role=Role.INSTRUCTOR,
            memberships__is_active=True,
        )
        .distinct()
        .first()
    )


def person_for(launch: Launch, course: Course) -> User:
    """The account with the launch's e-mail (any case), made when there is none: the linked LMS
    course is a roster. The person gets the LMS role in the course unless they already have one
    (a role set in courseops is never lowered by a launch); a dropped member who launches from
    the linked course is active again (audited)."""
    if not launch.email:
        raise DomainError(
            "The LMS did not send your e-mail address; ask its admin to share it with courseops "
            "(the tool's privacy level must include e-mail)."
        )
    if launch.role is None:
        raise NotAllowed("Your role in the LMS course has no place in courseops.")
    with transaction.atomic():
        user = User.objects.filter(email__iexact=launch.email).first()
        if user is None:  # no password: they come in through the LMS or the campus sign-on
            user = User.objects.create_user(email=launch.email, full_name=launch.name)
        membership, made = Membership.objects.get_or_create(
            user=user, course=course, defaults={"role": launch.role}
        )
        if made or not membership.is_active:
            if not membership.is_active:
                membership.is_active = True
                membership.save(update_fields=["is_active", "updated_at"])
            if membership.role == Role.STUDENT:
                publish(
                    StudentsEnrolled(
                        course=course, actor=None, at=timezone.now(), user_ids=(user.pk,)
                    )
                )
            audit_record(
                actor=None,
                action="lti.member_added" if made else "lti.member_reactivated",
                course=course,
                obj=membership,
                after={"email": user.email, "role": membership.role, "issuer": launch.issuer},
            )
    return user
