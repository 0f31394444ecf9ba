"""LTI 1.3 tool endpoints (pylti1p3 does the protocol: the OIDC login initiation, the id_token's
signature against the platform's JWKS, its expiry, audience, deployment and message checks).

`lti/login/` starts a launch, `lti/launch/` receives it, `lti/account/` lets a person signed in
to courseops link the LMS account they launched with (once), `lti/link/` lets the LMS course's
instructor link it to a courseops course once, `lti/jwks/` and `lti/config.json` are what Canvas
needs to register the tool. A launch that does not verify gets a page saying why (400), never a
500 and never a session."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import login, logout
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from pylti1p3.contrib.django import DjangoCacheDataStorage, DjangoMessageLaunch, DjangoOIDCLogin
from pylti1p3.contrib.django.lti1p3_tool_config import DjangoDbToolConf
from pylti1p3.contrib.django.lti1p3_tool_config.models import LtiTool
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.exception import LtiException

from apps.core.errors import DomainError
from apps.core.models import Course, Role, User
from apps.core.services import audit_record
from apps.lti import services
from apps.lti.models import LtiLink
from apps.lti.services import Launch

PENDING = "lti_pending_link"  # session: the launch an instructor is about to link
ACCOUNT = "lti_pending_account"  # session: the launch whose LMS account waits to be linked


def _storage() -> DjangoCacheDataStorage:
    return DjangoCacheDataStorage(cache_name="default")


def _refused(request: HttpRequest, why: str, status: int = 400) -> HttpResponse:
    with transaction.atomic():
        audit_record(actor=None, action="lti.refused", after={"why": why[:300]})
    return render(request, "lti/refused.html", {"why": why}, status=status)


@csrf_exempt
@require_http_methods(["GET", "POST"])
def lti_login(request: HttpRequest) -> HttpResponseBase:
    """The platform's third-party login initiation: back to the platform with state and nonce."""
    target = request.POST.get("target_link_uri") or request.GET.get("target_link_uri")
    if not target:
        return _refused(request, "The LMS did not say where to launch (target_link_uri).")
    try:
        oidc = DjangoOIDCLogin(request, DjangoDbToolConf(), launch_data_storage=_storage())
        return oidc.redirect(target)
    except LtiException as exc:
        return _refused(request, f"The LMS is not registered with courseops ({exc}).")


@csrf_exempt
@require_POST
def lti_launch(request: HttpRequest) -> HttpResponseBase:
    tool_conf = DjangoDbToolConf()
    message = DjangoMessageLaunch(request, tool_conf, launch_data_storage=_storage())
    try:
        data = message.get_launch_data()
    except LtiException as exc:
        return _refused(request, f"The launch did not verify: {exc}.")
    launch = Launch.from_claims(dict(data))
    try:
        services.use_nonce(launch)
    except DomainError as exc:
        return _refused(request, exc.message)
    tool = LtiTool.objects.get(issuer=launch.issuer, client_id=launch.client_id)
    deep = message.is_deep_link_launch()
    link = None if deep else services.link_for(tool.pk, launch)
    then = {"tool_id": tool.pk, **({"launch_id": message.get_launch_id()} if deep else {})}
    if link is None:
        # Not linked yet (or the LMS's instructor adds courseops by deep linking): only an
        # instructor whose LMS identity is linked to their courseops account links it; nobody
        # gets an account from an LMS course that is not linked to a courseops course.
        if launch.role != Role.INSTRUCTOR:
            if deep:
                return _refused(request, "Only the course's instructor adds courseops.", 403)
            return render(request, "lti/not_linked.html", {"launch": launch})
        try:
            teacher = services.account_for(tool.pk, launch)
        except DomainError as exc:
            return _refused(request, exc.message, status=403)
        if teacher is None:
            return _ask_to_link(request, launch, then, "")
        login(request, teacher, backend="apps.core.backends.ModelBackend")
        request.session[PENDING] = {**then, **launch.__dict__}
        return redirect("lti:link")
    try:
        user = services.person_for(launch, link.course, tool.pk)
    except services.NeedsLink as exc:
        return _ask_to_link(request, launch, then, exc.message)
    except DomainError as exc:
        return _refused(request, exc.message, status=403)
    return _signed_in(request, user, link, launch)


def _signed_in(request: HttpRequest, user: User, link: LtiLink, launch: Launch) -> HttpResponseBase:
    if request.user.is_authenticated and request.user.pk != user.pk:
        logout(request)  # another person's session in this browser ends here
    login(request, user, backend="apps.core.backends.ModelBackend")
    with transaction.atomic():
        services.remember(link, launch)
        audit_record(
            actor=user,
            action="auth.lti_launch",
            course=link.course,
            after={"role": launch.role, "lms_course": launch.context_title},
        )
    return redirect("core:dashboard", code=link.course.code)


def _ask_to_link(
    request: HttpRequest, launch: Launch, then: dict[str, Any], why: str
) -> HttpResponseBase:
    """No session from this launch: the person signs in to courseops and confirms the link."""
    with transaction.atomic():
        audit_record(
            actor=None,
            action="lti.link_asked",
            after={"issuer": launch.issuer, "sub": launch.sub, "why": why[:300]},
        )
    request.session[ACCOUNT] = {**then, "why": why, **launch.__dict__}
    return redirect("lti:account")


@require_http_methods(["GET", "POST"])
def lti_account(request: HttpRequest) -> HttpResponseBase:
    """Link the LMS account a launch came from to the courseops account signed in here, once."""
    pending = request.session.get(ACCOUNT)
    if not pending:
        return _refused(request, "Launch from the LMS course first.", status=403)
    pending = dict(pending)
    tool_id = pending.pop("tool_id")
    launch_id = pending.pop("launch_id", None)
    why = pending.pop("why", "")
    launch = Launch(**pending)
    context = {"launch": launch, "why": why, "error": "", "issuer": launch.issuer}
    if not request.user.is_authenticated:
        context["login_url"] = f"{reverse('login')}?next={reverse('lti:account')}"
        return render(request, "lti/account.html", context)
    if request.method == "POST":
        try:
            user = services.account_confirm(actor=request.user, tool_id=tool_id, launch=launch)
        except DomainError as exc:
            context["error"] = exc.message
            return render(request, "lti/account.html", context, status=409)
        request.session.pop(ACCOUNT, None)
        link = services.link_for(tool_id, launch)
        if link is None:  # an instructor's launch from an LMS course not linked yet
            request.session[PENDING] = {
                "tool_id": tool_id,
                **({"launch_id": launch_id} if launch_id else {}),
                **launch.__dict__,
            }
            return redirect("lti:link")
        try:
            user = services.person_for(launch, link.course, tool_id)
        except DomainError as exc:
            return _refused(request, exc.message, status=403)
        return _signed_in(request, user, link, launch)
    return render(request, "lti/account.html", context)


@require_http_methods(["GET", "POST"])
def lti_link(request: HttpRequest) -> HttpResponseBase:
    """The LMS course's instructor links it, once, to a courseops course they teach."""
    pending = request.session.get(PENDING)
    if not pending or not request.user.is_authenticated:
        return _refused(request, "Launch from the LMS course first.", status=403)
    pending = dict(pending)
    tool_id = pending.pop("tool_id")
    launch_id = pending.pop("launch_id", None)
    launch = Launch(**pending)
    courses = Course.objects.filter(
        memberships__user=request.user,
        memberships__role=Role.INSTRUCTOR,
        memberships__is_active=True,
    ).order_by("code")
    error = ""
    if request.method == "POST":
        course = courses.filter(code=request.POST.get("course", "")).first()
        if course is None:
            error = "Choose one of the courses you teach."
        else:
            try:
                link = services.link_create(
                    actor=request.user,
                    tool_id=tool_id,
                    launch=launch,
                    course=course,
                )
            except DomainError as exc:
                error = exc.message
            else:
                request.session.pop(PENDING, None)
                if launch_id:
                    return _deep_link_answer(request, launch_id, link.course)
                return redirect("core:dashboard", code=link.course.code)
    return render(
        request,
        "lti/link.html",
        {"launch": launch, "courses": courses, "error": error},
        status=400 if error else 200,
    )


def _deep_link_answer(request: HttpRequest, launch_id: str, course: Course) -> HttpResponse:
    """The deep-linking answer to the LMS: a resource link to this course, signed with the tool's
    key, posted back by a button (no script: the page's CSP allows the post to the LMS only)."""
    message = DjangoMessageLaunch.from_cache(
        launch_id, request, DjangoDbToolConf(), launch_data_storage=_storage()
    )
    deep = message.get_deep_link()
    resource = (
        DeepLinkResource()
        .set_url(settings.SITE_URL.rstrip("/") + reverse("lti:launch"))
        .set_title(f"courseops: {course.title}")
        .set_custom_params({"courseops_course": course.code})
    )
    settings_claim = message.get_launch_data()[
        "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
    ]
    action = str(settings_claim["deep_link_return_url"])
    response = render(
        request,
        "lti/deep_return.html",
        {"course": course, "action": action, "jwt": deep.get_response_jwt([resource])},
    )
    origin = "/".join(action.split("/")[:3])
    response._csp_update = {"form-action": [origin]}  # type: ignore[attr-defined]
    return response


@require_GET
def lti_jwks(request: HttpRequest) -> JsonResponse:
    """The tool's public keys, for the platform to check what courseops signs (AGS, NRPS)."""
    return JsonResponse(DjangoDbToolConf().get_jwks())


@require_GET
def lti_config(request: HttpRequest) -> JsonResponse:
    """Canvas's developer-key JSON ("Paste JSON"): where to log in, launch and find our keys."""
    base = settings.SITE_URL.rstrip("/")
    return JsonResponse(
        {
            "title": "courseops",
            "description": "Course operations: deadlines and slack days, groups and nodes, "
            "autograded numbers, checkoffs, labs.",
            "oidc_initiation_url": base + reverse("lti:login"),
            "target_link_uri": base + reverse("lti:launch"),
            "public_jwk_url": base + reverse("lti:jwks"),
            "scopes": [
                "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
                "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
                "https://purl.imsglobal.org/spec/lti-ags/scope/score",
                "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
            ],
            "extensions": [
                {
                    "platform": "canvas.instructure.com",
                    "privacy_level": "public",
                    "settings": {
                        "placements": [
                            {
                                "placement": "course_navigation",
                                "message_type": "LtiResourceLinkRequest",
                                "target_link_uri": base + reverse("lti:launch"),
                                "text": "courseops",
                                "windowTarget": "_blank",
                            }
                        ]
                    },
                }
            ],
            "custom_fields": {},
        },
        json_dumps_params={"indent": 2},
    )
