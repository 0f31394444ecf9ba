"""The route-complete permission matrix: every URL pattern × method × role, with another group's
ids (IDOR), against the expected outcome written below.

How it works: every URL pattern of the project (the admin aside: Django's own) is enumerated at
test time, every operation of the OpenAPI schema too. `EXPECTED` names a policy for each
"METHOD route"; a route or operation missing from it fails the test, so a new page or endpoint
must add its row in the same commit. Each request runs inside a rolled-back savepoint, so a
permitted write (dissolve, release, approve) cannot change what the next request sees.

Outcomes: `ok` (got past the permission check: 2xx, 3xx, or a 400/409 from the rules),
`login` (401, or a redirect to the login page), `deny` (403, or 404 for what is not yours),
`-` (405: the route has no such method). Student B's responses are also scanned for group A's
secrets (join code, incident text, IP address, members' emails).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
from django.contrib import messages
from django.contrib.messages import get_messages
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from apps.core.models import Heartbeat
from tests.world import World, build_world

ROLES = ("anonymous", "student_a", "student_b", "ta", "instructor", "outsider")

# Policies: the outcome for each role, in ROLES order. Student A owns the objects whose ids
# are in the URL; student B is in another group of the same course.
P = {
    "public": "ok ok ok ok ok ok",
    "authed": "login ok ok ok ok ok",
    "member": "login ok ok ok ok deny",  # any member of the course; objects shared course-wide
    "owner": "login ok deny ok ok deny",  # group A's object: A's members and staff only
    "staff": "login deny deny ok ok deny",
    "instructor": "login deny deny deny ok deny",
    "student": "login ok ok deny deny deny",  # a student's own things; staff have their pages
    "student-owner": "login ok deny deny deny deny",
    "student-owner-or-staff": "login ok deny ok ok deny",  # the asker's own, and staff
    "group-any": "login ok ok ok ok deny",  # rules decide (e.g. join, leave): not a leak
    # Refused to everyone by a rule of the demo term, not by role (group formation is over).
    "closed": "login deny deny deny deny deny",
    "n/a": "- - - - - -",
    "to-login": "login login login login login login",  # log-out ends at the login page
    # A secret-URL resource (the iCal feed) tried with a wrong token: nobody, not even its owner.
    "nobody": "deny deny deny deny deny deny",
}


def actions(policy: str, *routes: str) -> dict[str, str]:
    """Rows for POST-only action views (one view per action): `policy` for POST; a GET is
    refused (405, or the log-in page first)."""
    rows = {}
    for route in routes:
        rows[f"POST {route}"] = policy
        rows[f"GET {route}"] = "n/a"
    return rows


COURSE = "c/<slug:code>/"
API = "api/v1/courses/<slug:code>/"
EXPECTED: dict[str, str] = {
    # --- the cloud behind the compute board (apps.compute.cloud.views)
    f"GET {COURSE}compute/cloud/": "staff",
    f"POST {COURSE}compute/cloud/": "n/a",
    f"GET {COURSE}compute/cloud/jobs/<int:op_id>/": "staff",
    f"POST {COURSE}compute/cloud/jobs/<int:op_id>/": "n/a",
    f"GET {COURSE}compute/cloud/sync/": "staff",
    f"POST {COURSE}compute/cloud/sync/": "n/a",
    f"GET {COURSE}compute/cloud/preflight/": "staff",
    f"POST {COURSE}compute/cloud/preflight/": "n/a",
    f"GET {COURSE}compute/budget/": "staff",
    f"POST {COURSE}compute/budget/": "n/a",
    f"GET {COURSE}compute/budget/export.csv": "staff",
    f"POST {COURSE}compute/budget/export.csv": "n/a",
    f"GET {COURSE}compute/agent.py": "staff",
    f"POST {COURSE}compute/agent.py": "n/a",
    f"GET {COURSE}compute/nodes/<int:node_id>/agent/": "staff",
    f"POST {COURSE}compute/nodes/<int:node_id>/agent/": "n/a",
    # Power: staff, and the holding group when the course file allows it (EE 290 does).
    f"GET {COURSE}compute/nodes/<int:node_id>/power/": "owner",
    f"POST {COURSE}compute/nodes/<int:node_id>/power/": "n/a",
    **actions(
        "owner",
        f"{COURSE}compute/nodes/<int:node_id>/start/",
        f"{COURSE}compute/nodes/<int:node_id>/stop/",
    ),
    **actions(
        "staff",
        f"{COURSE}compute/cloud/check/",
        f"{COURSE}compute/cloud/jobs/<int:op_id>/retry/",
        f"{COURSE}compute/cloud/sync/apply/",
        f"{COURSE}compute/nodes/<int:node_id>/agent/token/",
    ),
    # --- pages: core, calendar, calculator, accounts
    "GET ": "authed",
    f"GET {COURSE}": "member",
    f"GET {COURSE}schedule/": "member",
    f"GET {COURSE}check/": "staff",  # the course's invariants (check_course)
    f"POST {COURSE}check/": "n/a",
    f"GET {COURSE}jobs/": "staff",  # background jobs: queued, running, stuck, failed
    f"POST {COURSE}jobs/": "n/a",
    f"GET {COURSE}help/": "member",  # where things are, the rules, the course's links
    f"POST {COURSE}help/": "n/a",
    # for a load balancer and Prometheus (the test client is loopback; others need a token)
    # Campus sign-on: the OpenID start is 404 where it is not configured (here); the callback
    # without a code goes to the refusal page; that page is for anyone (tests/sso/).
    "GET oidc/authenticate/": "nobody",
    "GET oidc/callback/": "public",
    "GET accounts/sso/refused/": "public",
    # SAML 2.0: every endpoint 404s where it is not configured (here); tests/sso/test_saml.py.
    "GET saml2/login/": "nobody",
    "POST saml2/acs/": "nobody",
    "GET saml2/metadata/": "nobody",
    "POST accounts/sso/refused/": "n/a",
    # LTI 1.3 (tests/lti/): the platform's calls carry no session, so they are open and refuse
    # by the protocol (400: no target, no id_token); the link page needs a pending launch (403).
    "GET lti/login/": "public",
    "POST lti/login/": "public",
    "POST lti/launch/": "public",
    "GET lti/launch/": "n/a",
    "GET lti/link/": "nobody",
    "POST lti/link/": "nobody",
    "GET lti/account/": "nobody",  # without a launch waiting in the session
    "POST lti/account/": "nobody",
    "GET lti/jwks/": "public",
    "POST lti/jwks/": "n/a",
    "GET lti/config.json": "public",
    f"GET {COURSE}lms/": "staff",  # linked LMS courses, roster sync, grade push (tests/lti/)
    f"POST {COURSE}lms/": "n/a",
    **actions("staff", f"{COURSE}lms/roster/", f"{COURSE}lms/grades/"),
    "POST lti/config.json": "n/a",
    "GET healthz": "public",
    "POST healthz": "n/a",
    "GET readyz": "public",
    "POST readyz": "n/a",
    "GET metrics": "public",
    "POST metrics": "n/a",
    f"GET {COURSE}calendar/": "member",
    f"POST {COURSE}calendar/": "n/a",
    **actions(  # one's own feed and reminder choices
        "member",
        f"{COURSE}calendar/feed/create/",
        f"{COURSE}calendar/feed/rotate/",
        f"{COURSE}calendar/feed/revoke/",
        f"{COURSE}calendar/reminders/",
    ),
    f"GET {COURSE}calendar/lectures/<int:lecture_id>/edit/": "staff",
    f"POST {COURSE}calendar/lectures/<int:lecture_id>/edit/": "staff",
    f"GET {COURSE}calendar/assignments/<int:assignment_id>/edit/": "staff",
    f"POST {COURSE}calendar/assignments/<int:assignment_id>/edit/": "staff",
    f"GET {COURSE}calendar/milestones/<int:milestone_id>/edit/": "staff",
    f"POST {COURSE}calendar/milestones/<int:milestone_id>/edit/": "staff",
    # --- similarity checks (apps.integrity, #70): staff only, students never
    f"GET {COURSE}integrity/": "staff",
    f"POST {COURSE}integrity/": "n/a",
    **actions(
        "staff", f"{COURSE}integrity/upload/", f"{COURSE}milestones/<int:milestone_id>/sources/"
    ),
    f"GET {COURSE}integrity/<int:check_id>/": "staff",
    f"POST {COURSE}integrity/<int:check_id>/": "n/a",
    f"GET {COURSE}integrity/<int:check_id>/export.csv": "staff",
    f"POST {COURSE}integrity/<int:check_id>/export.csv": "n/a",
    f"GET {COURSE}integrity/<int:check_id>/pairs/<int:match_id>/": "staff",
    f"POST {COURSE}integrity/<int:check_id>/pairs/<int:match_id>/": "n/a",
    f"GET {API}similarity/": "staff",
    f"GET {API}similarity/<int:check_id>/pairs/": "staff",
    f"GET {API}similarity/<int:check_id>/pairs/<int:match_id>/": "staff",
    f"GET {COURSE}milestones/": "member",  # students: their group's row; staff: the board
    f"POST {COURSE}milestones/": "n/a",
    **actions("student", f"{COURSE}milestones/<int:milestone_id>/submit/"),
    **actions(
        "staff",
        f"{COURSE}milestones/extend/",
        f"{COURSE}milestones/excuse/",
        f"{COURSE}milestones/unexcuse/",
    ),
    f"GET {COURSE}peer-review/": "member",  # a group: its reviews; staff: rounds, pairing, board
    f"POST {COURSE}peer-review/": "n/a",
    **actions(  # student A's group writes the review of this pair
        "student-owner",
        f"{COURSE}peer-review/reviews/<int:pair_id>/save/",
        f"{COURSE}peer-review/reviews/<int:pair_id>/submit/",
    ),
    **actions(
        "staff",
        f"{COURSE}peer-review/rounds/create/",
        f"{COURSE}peer-review/rounds/<int:round_id>/preview/",
        f"{COURSE}peer-review/rounds/<int:round_id>/reroll/",
        f"{COURSE}peer-review/rounds/<int:round_id>/avoid/",
        f"{COURSE}peer-review/rounds/<int:round_id>/exclude/",
        f"{COURSE}peer-review/rounds/<int:round_id>/swap/",
        f"{COURSE}peer-review/rounds/<int:round_id>/publish/",
    ),
    f"GET {COURSE}scribing/": "member",  # students: their lectures and preferences; staff: the board
    f"POST {COURSE}scribing/": "n/a",
    **actions("student", f"{COURSE}scribing/preferences/"),
    **actions(  # student A's duty and the swap it proposed
        "student-owner",
        f"{COURSE}scribing/duties/<int:duty_id>/submit/",
        f"{COURSE}scribing/duties/<int:duty_id>/swap/",
        f"{COURSE}scribing/swaps/<int:swap_id>/accept/",
        f"{COURSE}scribing/swaps/<int:swap_id>/decline/",
        f"{COURSE}scribing/swaps/<int:swap_id>/cancel/",
    ),
    **actions(
        "staff",
        f"{COURSE}scribing/plan/",
        f"{COURSE}scribing/lectures/",
        f"{COURSE}scribing/solve/",
        f"{COURSE}scribing/proposal/move/",
        f"{COURSE}scribing/publish/",
        f"{COURSE}scribing/duties/<int:duty_id>/accept/",
        f"{COURSE}scribing/duties/<int:duty_id>/revise/",
        f"{COURSE}scribing/duties/<int:duty_id>/release/",
        f"{COURSE}scribing/swaps/<int:swap_id>/revert/",
    ),
    f"GET {COURSE}milestones/export.csv": "staff",
    f"POST {COURSE}milestones/export.csv": "staff",
    "GET feeds/<str:token>.ics": "nobody",
    "POST feeds/<str:token>.ics": "n/a",
    "GET calc/": "authed",
    "GET calc/compare/": "authed",
    "GET calc/hardware/": "authed",
    "GET calc/plan/": "authed",
    "GET calc/<slug:name>/": "authed",
    "GET accounts/login/": "public",
    "POST accounts/login/": "public",
    "POST accounts/logout/": "to-login",
    "GET accounts/password/change/": "authed",
    "POST accounts/password/change/": "authed",
    "GET accounts/password/change/done/": "authed",
    "GET accounts/password/reset/": "public",
    "POST accounts/password/reset/": "public",
    "GET accounts/password/reset/sent/": "public",
    "GET accounts/password/reset/<uidb64>/<token>/": "public",
    "POST accounts/password/reset/<uidb64>/<token>/": "public",
    "GET accounts/password/reset/complete/": "public",
    # --- pages: groups, roster
    f"GET {COURSE}group/": "member",
    f"POST {COURSE}group/": "n/a",
    # Group formation is over in the demo term: the rules refuse students (a message).
    **actions(
        "student", f"{COURSE}group/create/", f"{COURSE}group/join/", f"{COURSE}group/rename/"
    ),
    **actions("closed", f"{COURSE}group/leave/"),  # after formation only staff move people
    **actions(
        "staff",
        f"{COURSE}groups/create/",
        f"{COURSE}groups/move/",
        f"{COURSE}groups/merge/",
        f"{COURSE}groups/members/<int:user_id>/remove/",
    ),
    f"GET {COURSE}groups/": "staff",
    f"GET {COURSE}groups/export.csv": "staff",
    f"GET {COURSE}groups/<int:group_id>/dissolve/": "staff",
    f"POST {COURSE}groups/<int:group_id>/dissolve/": "staff",
    f"GET {COURSE}roster/": "staff",
    f"POST {COURSE}roster/": "staff",
    f"GET {COURSE}roster/export.csv": "staff",
    f"POST {COURSE}roster/unlock/<int:user_id>/": "staff",
    f"GET {COURSE}roster/imports/<int:import_id>/": "staff",
    f"POST {COURSE}roster/imports/<int:import_id>/": "staff",
    # --- pages: compute
    f"GET {COURSE}node/": "member",
    f"POST {COURSE}node/": "member",
    f"GET {COURSE}node/files/<slug:kind>/": "student",
    f"GET {COURSE}windows/<int:window_id>/files/<slug:kind>/": "owner",
    f"GET {COURSE}compute/": "staff",
    **actions(
        "owner",
        f"{COURSE}windows/<int:window_id>/approve/",
        f"{COURSE}windows/<int:window_id>/cancel/",
    ),
    # Group A requested the window: the requester cancels, only a lender or staff decline.
    **actions("staff", f"{COURSE}windows/<int:window_id>/decline/"),
    **actions(
        "staff",
        f"{COURSE}compute/allocate-all/",
        f"{COURSE}compute/formation/",
        f"{COURSE}compute/moves/<int:move_id>/approve/",
        f"{COURSE}compute/moves/<int:move_id>/decline/",
        f"{COURSE}compute/groups/<int:group_id>/allocate/",
        f"{COURSE}compute/allocations/<int:allocation_id>/release/",
        f"{COURSE}compute/nodes/<int:node_id>/status/",
    ),
    # Quotas and schedules per group (apps.compute.usage.views).
    f"GET {COURSE}node/usage/": "member",
    f"POST {COURSE}node/usage/": "member",
    f"GET {COURSE}compute/usage/": "staff",
    f"POST {COURSE}compute/usage/": "n/a",
    **actions(
        "staff",
        f"{COURSE}compute/usage/quota/",
        f"{COURSE}compute/opt-outs/<int:opt_out_id>/approve/",
        f"{COURSE}compute/opt-outs/<int:opt_out_id>/decline/",
    ),
    # Group A's node is ready in the world: asking to move is refused by the rule (409), not role.
    **actions("student", f"{COURSE}node/move/"),
    f"GET {COURSE}runs/": "member",
    f"POST {COURSE}runs/": "member",
    f"GET {COURSE}runs/export.csv": "member",  # staff: every group's; a student: their own
    f"POST {COURSE}runs/export.csv": "n/a",
    f"GET {COURSE}incidents/": "member",
    f"POST {COURSE}incidents/": "member",
    f"POST {COURSE}incidents/<int:incident_id>/": "staff",
    # The world's incident is group A's own and not course-wide: nobody can say it affects them
    # (tests/compute/board/test_incidents.py covers a course-wide one).
    **actions("closed", f"{COURSE}incidents/<int:incident_id>/affects-us/"),
    # --- pages: slack days, autograder
    f"GET {COURSE}slack/": "member",
    f"POST {COURSE}slack/": "n/a",
    **actions("student", f"{COURSE}slack/apply/", f"{COURSE}slack/cancel/"),
    **actions(
        "staff",
        f"{COURSE}slack/staff/exceptions/grant/",
        f"{COURSE}slack/staff/exceptions/<int:exception_id>/revoke/",
        f"{COURSE}slack/staff/refund/",
        f"{COURSE}slack/staff/adjust/",
        f"{COURSE}slack/staff/late/<int:late_id>/decide/",
    ),
    f"GET {COURSE}slack/staff/": "staff",
    f"POST {COURSE}slack/staff/": "n/a",
    f"GET {COURSE}slack/deadlines/<int:assignment_id>/": "staff",  # every student's relief
    f"POST {COURSE}slack/deadlines/<int:assignment_id>/": "n/a",
    f"GET {COURSE}slack/import/": "staff",
    f"POST {COURSE}slack/import/": "staff",
    f"GET {COURSE}slack/import/<int:import_id>/": "staff",
    f"POST {COURSE}slack/import/<int:import_id>/": "staff",
    f"GET {COURSE}questions/": "member",
    f"GET {COURSE}questions/<slug:key>/": "member",
    f"POST {COURSE}questions/<slug:key>/": "n/a",
    **actions("student", f"{COURSE}questions/<slug:key>/answers/"),
    **actions(
        "staff",
        f"{COURSE}questions/<slug:key>/uploads/",
        f"{COURSE}questions/<slug:key>/uploads/<int:upload_id>/commit/",
        f"{COURSE}questions/<slug:key>/grade/",
        f"{COURSE}questions/<slug:key>/release/",
        f"{COURSE}questions/<slug:key>/hide/",
    ),
    f"GET {COURSE}questions/<slug:key>/written/<slug:qkey>/": "staff",
    f"POST {COURSE}questions/<slug:key>/written/<slug:qkey>/": "n/a",
    **actions(
        "staff",
        f"{COURSE}questions/<slug:key>/written/<slug:qkey>/marks/",
        f"{COURSE}questions/<slug:key>/written/<slug:qkey>/items/",
        f"{COURSE}questions/<slug:key>/written/<slug:qkey>/items/<int:item_id>/",
    ),
    f"GET {COURSE}grading/runs/<int:run_id>/progress/": "staff",
    f"GET {COURSE}questions/<slug:key>/uploads/<int:upload_id>/progress/": "staff",
    f"POST {COURSE}questions/<slug:key>/uploads/<int:upload_id>/progress/": "staff",
    f"GET {COURSE}grading/runs/<int:run_id>/": "staff",
    # --- pages that take one method (the other answers 405, or the login redirect first), and
    # pages that answer a POST as a GET (read-only function views)
    f"GET {COURSE}incidents/<int:incident_id>/": "n/a",
    f"GET {COURSE}roster/unlock/<int:user_id>/": "n/a",
    "POST ": "authed",
    f"POST {COURSE}": "n/a",  # Today is a page; it changes nothing
    f"POST {COURSE}schedule/": "member",
    f"POST {COURSE}compute/": "staff",
    f"POST {COURSE}groups/": "n/a",
    f"POST {COURSE}groups/export.csv": "staff",
    f"POST {COURSE}roster/export.csv": "staff",
    f"POST {COURSE}node/files/<slug:kind>/": "student",
    f"POST {COURSE}windows/<int:window_id>/files/<slug:kind>/": "owner",
    f"POST {COURSE}questions/": "member",
    f"POST {COURSE}grading/runs/<int:run_id>/": "staff",
    f"POST {COURSE}grading/runs/<int:run_id>/progress/": "staff",
    "POST calc/": "authed",
    "POST calc/<slug:name>/": "authed",
    "POST calc/compare/": "authed",
    "POST calc/hardware/": "authed",
    "POST calc/plan/": "authed",
    "PUT accounts/login/": "public",
    "PUT accounts/password/change/": "authed",
    "PUT accounts/password/reset/": "public",
    "PUT accounts/password/reset/<uidb64>/<token>/": "public",
    # --- API: core
    "POST api/v1/auth/token/": "public",
    "GET api/v1/auth/tokens/": "authed",  # one's own tokens
    "DELETE api/v1/auth/tokens/<int:token_id>/": "student-owner",
    "GET accounts/tokens/": "authed",
    "GET accounts/sso/": "authed",
    "POST accounts/sso/": "n/a",
    "POST accounts/sso/link/": "authed",
    "GET accounts/sso/link/": "n/a",
    "POST accounts/tokens/": "n/a",
    "POST accounts/tokens/create/": "authed",
    "GET accounts/tokens/create/": "n/a",
    "GET accounts/tokens/<int:token_id>/revoke/": "student-owner",
    "POST accounts/tokens/<int:token_id>/revoke/": "student-owner",
    "DELETE api/v1/auth/token/": "authed",
    "GET api/v1/me/": "authed",
    "GET api/v1/courses/": "authed",
    "GET api/v1/courses/<slug:code>/": "member",
    "GET api/schema/": "public",
    "GET api/docs/": "public",
    # --- API: calculator (every formula is one row: see _key)
    "GET api/v1/perfcalc/": "authed",
    "GET api/v1/perfcalc/hardware/": "authed",
    "GET api/v1/perfcalc/models/": "authed",
    "GET api/v1/perfcalc/plan/": "authed",
    "POST api/v1/perfcalc/batch/": "authed",
    "POST api/v1/perfcalc/vector/": "authed",
    "POST api/v1/perfcalc/<formula>/": "authed",
    # --- API: calendar and milestones
    f"GET {API}calendar/": "member",
    f"GET {API}calendar/feed/": "member",
    f"PATCH {API}calendar/feed/": "member",
    f"DELETE {API}calendar/feed/": "member",
    f"POST {API}calendar/feed/rotate/": "member",
    f"PATCH {API}calendar/lectures/<int:lecture_id>/": "staff",
    f"PATCH {API}calendar/assignments/<int:assignment_id>/": "staff",
    f"GET {API}calendar/assignments/<int:assignment_id>/impact/": "staff",
    f"PATCH {API}calendar/milestones/<int:milestone_id>/": "staff",
    f"GET {API}calendar/milestones/<int:milestone_id>/impact/": "staff",
    # --- API: assessments
    # Labs: anyone in the course reads them; students lock, run and submit their own steps.
    f"GET {COURSE}labs/": "member",
    f"POST {COURSE}labs/": "n/a",
    f"GET {COURSE}labs/<slug:lab>/": "member",
    f"POST {COURSE}labs/<slug:lab>/": "n/a",
    **actions(
        "student",
        f"{COURSE}labs/<slug:lab>/context/",
        f"{COURSE}labs/<slug:lab>/steps/<int:number>/lock/",
        f"{COURSE}labs/<slug:lab>/steps/<int:number>/run/",
        f"{COURSE}labs/<slug:lab>/steps/<int:number>/submit/",
    ),
    f"GET {API}labs/": "member",
    f"GET {API}labs/<slug:lab>/": "member",
    f"POST {API}labs/<slug:lab>/steps/<int:number>/lock/": "student",
    f"POST {API}labs/<slug:lab>/steps/<int:number>/instrument/": "student",
    f"POST {API}labs/<slug:lab>/steps/<int:number>/submit/": "student",
    f"GET {API}assessments/": "member",
    f"POST {API}assessments/": "staff",
    f"POST {API}assessments/<int:assessment_id>/imports/": "staff",
    f"GET {API}assessments/<int:assessment_id>/imports/<int:batch_id>/": "staff",
    f"POST {API}assessments/<int:assessment_id>/imports/<int:batch_id>/commit/": "staff",
    f"GET {API}assessments/<int:assessment_id>/report/": "staff",  # students too once published
    f"GET {API}assessments/<int:assessment_id>/export/": "staff",
    f"GET {API}assessments/<int:assessment_id>/mine/": "student",
    f"POST {API}assessments/<int:assessment_id>/publish/": "staff",
    f"DELETE {API}assessments/<int:assessment_id>/identities/": "instructor",
    # --- API: checkoffs
    f"GET {API}checkoffs/sets/": "member",  # students: published sign-ups
    f"POST {API}checkoffs/sets/": "staff",
    f"POST {API}checkoffs/sets/<int:set_id>/publish/": "staff",
    f"GET {API}checkoffs/sets/<int:set_id>/slots/": "member",  # free places, never who booked
    f"POST {API}checkoffs/sets/<int:set_id>/slots/": "staff",
    f"GET {API}checkoffs/sets/<int:set_id>/unbooked/": "staff",
    f"POST {API}checkoffs/sets/<int:set_id>/unbooked/": "staff",
    f"DELETE {API}checkoffs/slots/<int:slot_id>/": "staff",
    f"POST {API}checkoffs/slots/<int:slot_id>/book/": "student",  # B: 409 (full), never A's booking
    f"POST {API}checkoffs/slots/<int:slot_id>/cancel/": "student-owner",  # B cannot cancel A's
    f"GET {API}checkoffs/bookings/": "member",  # students: their group's (scanned below)
    f"POST {API}checkoffs/bookings/<int:booking_id>/outcome/": "staff",
    # --- API: peer review
    f"GET {API}peer-review/rounds/": "member",  # students: published rounds
    f"POST {API}peer-review/rounds/": "staff",
    f"GET {API}peer-review/rounds/<int:round_id>/pairing/": "staff",
    f"POST {API}peer-review/rounds/<int:round_id>/pairing/": "staff",
    f"GET {API}peer-review/rounds/<int:round_id>/assignments/": "member",  # a group: whom it reviews
    f"GET {API}peer-review/drafts/": "member",  # own group's and reviewees' drafts only
    f"GET {API}peer-review/reviews/": "member",  # own writing; received only after the due date
    f"PUT {API}peer-review/reviews/<int:pair_id>/": "student-owner",
    # --- API: scribing
    f"GET {COURSE}assessments/": "member",
    f"POST {COURSE}assessments/": "staff",
    **actions("staff", f"{COURSE}assessments/extended-time/"),
    # SSH keys: each person's own, not course-scoped
    "GET accounts/ssh-keys/": "authed",
    "POST accounts/ssh-keys/": "n/a",
    **actions("authed", "accounts/ssh-keys/add/"),
    **actions("student-owner", "accounts/ssh-keys/<int:key_id>/remove/"),
    # The node agent authenticates with its node's token, never a person's session.
    "POST api/v1/compute/agent/samples/": "to-login",
    "GET api/v1/me/ssh-keys/": "authed",
    "POST api/v1/me/ssh-keys/": "authed",
    "DELETE api/v1/me/ssh-keys/<int:key_id>/": "student-owner",
    # lecture check-in: students enter the room's code; staff open, show, close and correct
    f"GET {COURSE}checkin/": "member",
    f"POST {COURSE}checkin/": "n/a",
    **actions("student", f"{COURSE}checkin/enter/"),
    **actions(
        "staff",
        f"{COURSE}checkin/open/",
        f"{COURSE}checkin/sessions/<int:session_id>/close/",
        f"{COURSE}checkin/entries/<int:checkin_id>/remove/",
    ),
    f"GET {COURSE}checkin/sessions/<int:session_id>/screen/": "staff",
    f"POST {COURSE}checkin/sessions/<int:session_id>/screen/": "n/a",
    f"GET {API}participation/checkin/": "member",
    f"POST {API}participation/checkin/": "student",
    # extension requests: students ask and withdraw their own; staff decide; the document is
    # the asker's and staff's only
    f"GET {COURSE}extensions/": "member",
    f"POST {COURSE}extensions/": "n/a",
    **actions("student", f"{COURSE}extensions/ask/"),
    **actions("student-owner", f"{COURSE}extensions/<int:request_id>/withdraw/"),
    **actions(
        "staff",
        f"{COURSE}extensions/<int:request_id>/approve/",
        f"{COURSE}extensions/<int:request_id>/decline/",
    ),
    f"GET {COURSE}extensions/<int:request_id>/document/": "student-owner-or-staff",
    f"POST {COURSE}extensions/<int:request_id>/document/": "n/a",
    f"GET {API}extensions/": "member",  # staff: the queue; a student: their own (scanned below)
    f"POST {API}extensions/": "student",
    f"POST {API}extensions/<int:request_id>/decide/": "staff",
    f"POST {API}extensions/<int:request_id>/withdraw/": "student-owner",
    # practice sets: students check at once and draw new numbers (rules refuse a graded set)
    **actions(
        "student",
        f"{COURSE}questions/<slug:key>/practice/<slug:qkey>/check/",
        f"{COURSE}questions/<slug:key>/practice/<slug:qkey>/variant/",
    ),
    f"POST {API}question-sets/<slug:key>/practice/<slug:qkey>/check/": "student",
    f"POST {API}question-sets/<slug:key>/practice/<slug:qkey>/variant/": "student",
    # practice that teaches: a student gives up on a variant and reads its solution (issue 70)
    **actions("student", f"{COURSE}questions/<slug:key>/practice/<slug:qkey>/solution/"),
    f"POST {API}question-sets/<slug:key>/practice/<slug:qkey>/solution/": "student",
    # several graders per written question: staff split its answers (issue 70)
    **actions("staff", f"{COURSE}questions/<slug:key>/written/<slug:qkey>/split/"),
    f"POST {API}question-sets/<slug:key>/written/<slug:qkey>/split/": "staff",
    # fair written grading: staff hide names for a set and give written questions to graders
    **actions(
        "staff",
        f"{COURSE}questions/<slug:key>/hide-names/",
        f"{COURSE}questions/<slug:key>/written/<slug:qkey>/grader/",
    ),
    # regrade requests: students ask (rules refuse an unreleased set: not a leak); staff decide
    **actions("student", f"{COURSE}questions/<slug:key>/regrade/"),
    f"GET {COURSE}regrades/": "staff",
    f"POST {COURSE}regrades/": "n/a",
    **actions(
        "staff",
        f"{COURSE}regrades/<int:request_id>/rescore/",
        f"{COURSE}regrades/<int:request_id>/decline/",
    ),
    f"POST {API}question-sets/<slug:key>/regrades/": "student",
    f"GET {API}regrades/": "member",  # staff: the queue; a student: their own requests
    f"POST {API}regrades/<int:request_id>/decide/": "staff",
    f"GET {COURSE}assessments/<int:assessment_id>/": "member",  # students: their own scores only until published
    f"POST {COURSE}assessments/<int:assessment_id>/": "n/a",
    f"GET {COURSE}assessments/<int:assessment_id>/take/": "member",
    f"POST {COURSE}assessments/<int:assessment_id>/take/": "n/a",
    # The study's separate demographics form: students fill it in (a student without research
    # consent is told why: 200), staff only read the counts on the report.
    f"GET {COURSE}assessments/<int:assessment_id>/demographics/": "member",
    f"POST {COURSE}assessments/<int:assessment_id>/demographics/": "student",
    **actions(
        "student",
        f"{COURSE}assessments/<int:assessment_id>/take/start/",
        f"{COURSE}assessments/<int:assessment_id>/take/submit/",
    ),
    **actions(
        "staff",
        f"{COURSE}assessments/<int:assessment_id>/window/",
        f"{COURSE}assessments/<int:assessment_id>/imports/",
        f"{COURSE}assessments/<int:assessment_id>/imports/<int:batch_id>/commit/",
        f"{COURSE}assessments/<int:assessment_id>/publish/",
        f"{COURSE}assessments/<int:assessment_id>/unpublish/",
    ),
    **actions("instructor", f"{COURSE}assessments/<int:assessment_id>/id-map/destroy/"),
    f"GET {COURSE}checkoffs/": "member",  # students: published sign-ups, their group's booking
    f"POST {COURSE}checkoffs/": "n/a",  # the page only renders: each change has its own URL
    **actions(
        "student",
        f"{COURSE}checkoffs/slots/<int:slot_id>/book/",
        f"{COURSE}checkoffs/slots/<int:slot_id>/move/",
        f"{COURSE}checkoffs/slots/<int:slot_id>/cancel/",
    ),
    **actions(
        "staff",
        f"{COURSE}checkoffs/slots/<int:slot_id>/delete/",
        f"{COURSE}checkoffs/sets/create/",
        f"{COURSE}checkoffs/sets/<int:set_id>/publish/",
        f"{COURSE}checkoffs/sets/<int:set_id>/unpublish/",
        f"{COURSE}checkoffs/sets/<int:set_id>/slots/create/",
        f"{COURSE}checkoffs/sets/<int:set_id>/slot/create/",
        f"{COURSE}checkoffs/sets/<int:set_id>/remind/",
    ),
    f"GET {COURSE}checkoffs/schedule/": "staff",
    f"POST {COURSE}checkoffs/schedule/": "staff",
    f"GET {COURSE}checkoffs/outcomes/": "staff",
    f"POST {COURSE}checkoffs/outcomes/": "staff",
    f"GET {API}scribing/lectures/": "member",
    f"GET {API}scribing/preferences/": "student",
    f"PUT {API}scribing/preferences/": "student",
    f"GET {API}scribing/solve/": "staff",
    f"POST {API}scribing/solve/": "staff",
    f"POST {API}scribing/publish/": "staff",
    f"GET {API}scribing/duties/": "member",  # students: their own duties only
    f"POST {API}scribing/duties/<int:duty_id>/submit/": "student-owner",
    f"POST {API}scribing/duties/<int:duty_id>/review/": "staff",
    f"GET {API}scribing/swaps/": "member",  # students: swaps involving them
    f"POST {API}scribing/swaps/": "student",
    f"POST {API}scribing/swaps/<int:swap_id>/decide/": "owner",
    f"GET {API}milestones/": "member",  # students: their group's row only (scanned below)
    f"POST {API}milestones/<int:milestone_id>/submit/": "student",
    f"POST {API}milestones/<int:milestone_id>/extension/": "staff",
    f"POST {API}milestones/<int:milestone_id>/excuse/": "staff",
    # --- gradebook
    f"GET {COURSE}gradebook/": "member",  # students: their own grade; staff: the board
    f"POST {COURSE}gradebook/": "member",  # staff enter a score; a student's post changes nothing
    f"GET {COURSE}gradebook/students/<int:user_id>/": "staff",
    f"POST {COURSE}gradebook/students/<int:user_id>/": "staff",
    f"GET {COURSE}gradebook/components/": "staff",
    f"POST {COURSE}gradebook/components/": "n/a",
    **actions(
        "instructor",
        f"{COURSE}gradebook/components/save/",
        f"{COURSE}gradebook/freeze/",
        f"{COURSE}gradebook/unfreeze/",
    ),
    f"GET {COURSE}gradebook/import/": "staff",
    f"POST {COURSE}gradebook/import/": "staff",
    f"GET {COURSE}gradebook/imports/<int:import_id>/": "staff",
    f"POST {COURSE}gradebook/imports/<int:import_id>/": "staff",
    f"GET {COURSE}gradebook/export.csv": "staff",
    f"POST {COURSE}gradebook/export.csv": "staff",
    f"GET {API}gradebook/components/": "member",
    f"PUT {API}gradebook/components/": "instructor",
    f"GET {API}gradebook/scores/": "staff",
    f"POST {API}gradebook/scores/": "staff",
    f"POST {API}gradebook/imports/": "staff",
    f"GET {API}gradebook/imports/<int:import_id>/": "staff",
    f"POST {API}gradebook/imports/<int:import_id>/commit/": "staff",
    f"GET {API}gradebook/students/": "staff",
    f"GET {API}gradebook/me/": "student",
    f"GET {API}gradebook/export/": "staff",
    f"POST {API}gradebook/freeze/": "instructor",
    # --- questionnaire
    f"GET {COURSE}questionnaire/": "member",  # students: their answers; staff: the summary
    # Students answer here (closed in the demo term: a message); staff change it below (405).
    f"POST {COURSE}questionnaire/": "login ok ok - - deny",
    f"GET {COURSE}questionnaire/people/": "staff",
    f"POST {COURSE}questionnaire/people/": "n/a",
    f"GET {COURSE}questionnaire/suggestions/": "staff",
    f"POST {COURSE}questionnaire/suggestions/": "n/a",
    **actions(
        "staff",
        f"{COURSE}questionnaire/create/",
        f"{COURSE}questionnaire/window/",
        f"{COURSE}questionnaire/questions/add/",
        f"{COURSE}questionnaire/questions/<int:question_id>/remove/",
        f"{COURSE}questionnaire/people/remind/",
        f"{COURSE}questionnaire/people/<int:user_id>/decision/",
        f"{COURSE}questionnaire/suggestions/make/",
        f"{COURSE}questionnaire/suggestions/<int:suggestion_id>/move/",
        f"{COURSE}questionnaire/suggestions/<int:suggestion_id>/accept/",
    ),
    f"GET {API}questionnaire/": "member",
    f"PUT {API}questionnaire/answers/": "student",
    f"GET {API}questionnaire/people/": "staff",
    f"POST {API}questionnaire/remind/": "staff",
    f"POST {API}questionnaire/decisions/": "staff",
    f"GET {API}questionnaire/suggestions/": "staff",
    f"POST {API}questionnaire/suggestions/": "staff",
    f"POST {API}questionnaire/suggestions/<int:suggestion_id>/accept/": "staff",
    # --- question contributions
    f"GET {COURSE}contributions/": "member",  # students: their own and the accepted ones
    f"POST {COURSE}contributions/": "n/a",
    **actions(
        "student",
        f"{COURSE}contributions/check/",
        f"{COURSE}contributions/propose/",
        f"{COURSE}contributions/<int:proposal_id>/edit/",
    ),
    **actions("staff", f"{COURSE}contributions/<int:proposal_id>/review/"),
    f"GET {API}contributions/": "member",  # never another's under review (scanned below)
    f"POST {API}contributions/": "student",
    f"POST {API}contributions/check/": "member",
    f"GET {API}contributions/credits/": "staff",
    f"PUT {API}contributions/<int:proposal_id>/": "student-owner",
    f"POST {API}contributions/<int:proposal_id>/review/": "staff",
    # --- impact and participation
    f"GET {COURSE}impact/": "member",  # a group: its own evidence; staff: every group's
    f"POST {COURSE}impact/": "n/a",
    **actions("student", f"{COURSE}impact/items/add/"),
    **actions("student-owner", f"{COURSE}impact/items/<int:item_id>/remove/"),
    **actions(
        "staff",
        f"{COURSE}impact/items/<int:item_id>/score/",
        f"{COURSE}impact/groups/<int:group_id>/score/",
    ),
    f"GET {COURSE}participation/": "member",  # students: their own record
    f"POST {COURSE}participation/": "n/a",
    **actions(
        "staff",
        f"{COURSE}participation/record/",
        f"{COURSE}participation/import/",
        f"{COURSE}participation/events/<int:event_id>/delete/",
    ),
    f"GET {COURSE}participation/imports/<int:import_id>/": "staff",
    f"POST {COURSE}participation/imports/<int:import_id>/": "staff",
    f"GET {API}impact/items/": "member",  # students: their group's (scanned below)
    f"POST {API}impact/items/": "student",
    f"DELETE {API}impact/items/<int:item_id>/": "owner",
    f"POST {API}impact/items/<int:item_id>/score/": "staff",
    f"GET {API}impact/groups/": "staff",
    f"POST {API}impact/groups/<int:group_id>/score/": "staff",
    f"GET {API}participation/events/": "member",  # students: their own
    f"POST {API}participation/events/": "staff",
    f"DELETE {API}participation/events/<int:event_id>/": "staff",
    f"GET {API}participation/summary/": "staff",
    f"POST {API}participation/imports/": "staff",
    f"GET {API}participation/imports/<int:import_id>/": "staff",
    f"POST {API}participation/imports/<int:import_id>/commit/": "staff",
    # --- API: groups
    f"GET {API}groups/": "member",
    f"POST {API}groups/": "member",
    f"POST {API}groups/join/": "member",
    f"POST {API}groups/leave/": "closed",
    f"GET {API}groups/ungrouped/": "staff",
    f"GET {API}groups/<int:group_id>/": "member",  # others see name and size (scanned below)
    f"PATCH {API}groups/<int:group_id>/": "owner",
    f"DELETE {API}groups/<int:group_id>/": "staff",
    f"POST {API}groups/<int:group_id>/members/": "staff",
    f"DELETE {API}groups/<int:group_id>/members/<int:user_id>/": "staff",
    f"POST {API}groups/<int:group_id>/merge/": "staff",
    # --- API: roster
    f"GET {API}roster/": "staff",
    f"POST {API}roster/imports/": "staff",
    f"GET {API}roster/imports/<int:import_id>/": "staff",
    f"POST {API}roster/imports/<int:import_id>/commit/": "staff",
    # --- API: compute
    f"GET {API}nodes/": "member",
    f"POST {API}nodes/": "staff",
    f"PATCH {API}nodes/<int:node_id>/": "staff",
    f"GET {API}static-ips/": "staff",
    f"POST {API}static-ips/": "staff",
    f"GET {API}allocations/": "member",
    f"POST {API}allocations/": "staff",
    f"POST {API}allocations/allocate-all/": "staff",
    f"POST {API}allocations/<int:allocation_id>/release/": "staff",
    f"GET {API}my-node/files/": "student",
    f"GET {API}windows/": "member",
    f"POST {API}windows/": "member",
    f"POST {API}windows/<int:window_id>/approve/": "owner",  # A takes part with its own node
    f"POST {API}windows/<int:window_id>/decline/": "staff",
    f"POST {API}windows/<int:window_id>/cancel/": "owner",
    f"GET {API}windows/<int:window_id>/files/": "owner",
    f"GET {API}incidents/": "member",
    f"POST {API}incidents/": "member",
    f"POST {API}incidents/<int:incident_id>/status/": "staff",
    f"GET {API}question-sets/<slug:key>/written/<slug:qkey>/": "staff",
    f"POST {API}question-sets/<slug:key>/written/<slug:qkey>/marks/": "staff",
    f"GET {API}runs/": "member",
    f"POST {API}runs/": "member",  # a student for their group; staff name the group
    f"GET {API}incidents/course-wide/": "member",
    f"POST {API}incidents/<int:incident_id>/affects-us/": "closed",
    # --- API: slack days
    f"GET {API}slack/me/": "member",  # staff: an empty balance of their own
    f"POST {API}slack/apply/": "student",
    f"POST {API}slack/cancel/": "student",
    f"GET {API}slack/balances/": "staff",
    f"GET {API}slack/ledger/": "member",
    f"POST {API}slack/refund/": "staff",
    f"POST {API}slack/adjust/": "staff",
    f"GET {API}slack/exceptions/": "member",
    f"GET {API}slack/deadlines/<int:assignment_id>/": "staff",
    f"POST {API}slack/exceptions/": "staff",
    f"POST {API}slack/lateness/": "staff",
    f"POST {API}slack/lateness/<int:import_id>/commit/": "staff",
    # --- API: autograder
    f"GET {API}question-sets/": "member",
    f"GET {API}question-sets/<slug:key>/mine/": "member",  # staff: sample numbers
    f"POST {API}question-sets/<slug:key>/answers/": "student",
    f"POST {API}question-sets/<slug:key>/uploads/": "staff",
    f"GET {API}question-sets/<slug:key>/uploads/<int:upload_id>/": "staff",
    f"POST {API}question-sets/<slug:key>/uploads/<int:upload_id>/commit/": "staff",
    f"POST {API}question-sets/<slug:key>/runs/": "staff",
    f"POST {API}question-sets/<slug:key>/release/": "staff",
    # who grades what, as the set's page shows and changes it (same services, staff only)
    f"GET {API}question-sets/<slug:key>/written/": "staff",
    f"POST {API}question-sets/<slug:key>/names-hidden/": "staff",
    f"POST {API}question-sets/<slug:key>/written/<slug:qkey>/grader/": "staff",
    f"GET {API}grading-runs/<int:run_id>/": "staff",
    f"GET {API}grading-runs/<int:run_id>/totals/": "staff",
}

# Routes served by a third party or a generic handler, kept out of the matrix on purpose.
SKIPPED_PREFIXES = ("admin/",)
FORMULA_ROUTE = "api/v1/perfcalc/<formula>/"
FIXED_PERFCALC = {"", "hardware/", "models/", "plan/", "batch/", "vector/"}


def _walk(patterns: list[Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for p in patterns:
        if isinstance(p, URLPattern):
            out.append((prefix + str(p.pattern), p.callback))
        elif isinstance(p, URLResolver):
            out.extend(_walk(p.url_patterns, prefix + str(p.pattern)))
    return out


def _key(route: str) -> str:
    if (
        route.startswith("api/v1/perfcalc/")
        and route.removeprefix("api/v1/perfcalc/") not in FIXED_PERFCALC
    ):
        return FORMULA_ROUTE
    return route


def _methods(callback: Any) -> list[str]:
    view = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
    if view is not None:
        names = ["get", "post", "put", "patch", "delete"]
        return [
            m.upper()
            for m in names
            if hasattr(view, m) and m in getattr(view, "http_method_names", names)
        ]
    return ["GET", "POST"]


def all_routes() -> list[tuple[str, str]]:
    """(METHOD, route) for every route of the project, the admin aside."""
    out = []
    for route, callback in _walk(get_resolver().url_patterns):
        if route.startswith(SKIPPED_PREFIXES):
            continue
        for method in _methods(callback):
            out.append((method, route))
    return out


def _url(route: str, world: World) -> str:
    ids = world.ids
    values = {
        "<slug:code>": ids["code"],
        "<int:group_id>": ids["group_id"],
        "<int:user_id>": ids["user_id"],
        "<int:window_id>": ids["window_id"],
        "<int:incident_id>": ids["incident_id"],
        "<int:run_id>": ids["run_id"],
        "<int:allocation_id>": ids["allocation_id"],
        "<int:node_id>": ids["node_id"],
        "<int:op_id>": ids["op_id"],
        "<slug:key>": ids["written_key"]
        if "written" in route or "practice" in route
        else ids["key"],
        "<slug:qkey>": ids["written_qkey"],
        "<slug:kind>": "hosts",
        "<slug:action>": "cancel",
        "<slug:name>": "roofline-time",
        "<uidb64>": "MQ",
        "<token>": "set-password",
        "<int:import_id>": ids["lateness_import_id"]
        if "slack" in route
        else ids["score_import_id"]
        if "gradebook" in route
        else ids["participation_import_id"]
        if "participation" in route
        else ids["import_id"],
        "<int:item_id>": ids["rubric_item_id"] if "written" in route else ids["impact_item_id"],
        "<int:suggestion_id>": ids["suggestion_id"],
        "<int:proposal_id>": ids["proposal_id"],
        "<int:event_id>": ids["participation_event_id"],
        "<int:lecture_id>": ids["lecture_id"],
        "<int:exception_id>": ids["exception_id"],
        "<int:question_id>": ids["question_id"],
        "<int:late_id>": ids["late_id"],
        "<int:token_id>": ids["token_id"],
        "<int:session_id>": ids["checkin_session_id"],
        "<int:key_id>": ids["ssh_key_id"],
        "<int:checkin_id>": ids["checkin_id"],
        "<int:request_id>": ids["extension_request_id"]
        if "extensions" in route
        else ids["request_id"],
        "<int:assignment_id>": ids["assignment_id"],
        "<int:milestone_id>": ids["milestone_id"],
        "<str:token>": "0123456789abwrong-secret",
        "<int:upload_id>": ids["upload_id"],
        "<int:duty_id>": ids["duty_id"],
        "<int:swap_id>": ids["swap_id"],
        "<int:round_id>": ids["round_id"],
        "<int:pair_id>": ids["pair_id"],
        "<int:set_id>": ids["set_id"],
        "<int:slot_id>": ids["slot_id"],
        "<int:booking_id>": ids["booking_id"],
        "<int:assessment_id>": ids["assessment_id"],
        "<int:move_id>": ids["move_id"],
        "<int:opt_out_id>": ids["opt_out_id"],
        "<int:batch_id>": ids["batch_id"],
        "<slug:lab>": "lab09-perf-engr",
        "<int:number>": 1,
        "<int:check_id>": ids["check_id"],
        "<int:match_id>": ids["match_id"],
    }
    url = "/" + route
    for placeholder, value in values.items():
        url = url.replace(placeholder, str(value))
    assert "<" not in url, f"no test value for a parameter of {route}"
    return url


def _outcome(response: Any) -> str:
    code = response.status_code
    if code == 401 or (code == 302 and response["Location"].startswith("/accounts/login/")):
        return "login"
    if code == 302:  # a page that refuses with a message and a redirect
        refused = [m for m in get_messages(response.wsgi_request) if m.level >= messages.ERROR]
        kinds = [t for m in refused for t in m.extra_tags.split() if t.startswith("refused-")]
        if kinds:  # an action view tags a refusal with its kind: a permission or a rule
            denied = {"refused-not_allowed", "refused-not_found"}
            return "deny" if any(k in denied for k in kinds) else "ok"
        if refused and any(
            w in str(m) for m in refused for w in ("may ", "only", "Only", "not yours", "No such")
        ):
            return "deny"
    if code in (403, 404):
        return "deny"
    if code == 405:
        return "-"
    if code >= 500:
        return f"ERROR {code}"
    return "ok"


def _client(world: World, role: str) -> Client:
    client = Client(raise_request_exception=False)
    user = world.people[role]
    if user is not None:
        client.force_login(user)
    return client


def _request(client: Client, method: str, url: str) -> Any:
    """One request whose writes are rolled back; a log-out (which clears the cookie) too."""
    cookies = client.cookies
    client.cookies = type(cookies)(cookies)
    with transaction.atomic():
        call = getattr(client, method.lower())
        kwargs: dict[str, Any] = (
            {"content_type": "application/json"}
            if url.startswith("/api/") and method != "GET"
            else {}
        )
        response = call(url, **kwargs) if method != "GET" else call(url)
        transaction.set_rollback(True)
    client.cookies = cookies
    return response


@pytest.fixture
def world(ee290_demo) -> World:  # type: ignore[no-untyped-def]
    Heartbeat.objects.create(name="sweep", at=timezone.now())  # a worker and beat are alive
    return build_world(ee290_demo)


def test_every_route_is_in_the_matrix() -> None:
    routes = {f"{m} {_key(r)}" for m, r in all_routes()}
    missing = sorted(routes - set(EXPECTED))
    assert not missing, "routes without a row in EXPECTED (add one per role policy):\n" + "\n".join(
        missing
    )
    stale = sorted(set(EXPECTED) - routes)
    assert not stale, "rows in EXPECTED for routes that no longer exist:\n" + "\n".join(stale)


def test_every_openapi_operation_is_in_the_matrix() -> None:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    rows = set(EXPECTED)
    missing = []
    for path, item in schema["paths"].items():
        for method in item:
            route = path.lstrip("/").replace("{code}", "<slug:code>").replace("{key}", "<slug:key>")
            route = route.replace("{lab}", "<slug:lab>").replace("{qkey}", "<slug:qkey>")
            for name in (
                "group_id",
                "user_id",
                "window_id",
                "incident_id",
                "run_id",
                "allocation_id",
                "node_id",
                "import_id",
                "lecture_id",
                "assignment_id",
                "milestone_id",
                "upload_id",
                "duty_id",
                "swap_id",
                "round_id",
                "pair_id",
                "set_id",
                "slot_id",
                "booking_id",
                "assessment_id",
                "batch_id",
                "item_id",
                "suggestion_id",
                "proposal_id",
                "event_id",
                "token_id",
                "request_id",
                "key_id",
                "number",
                "check_id",
                "match_id",
            ):
                route = route.replace("{" + name + "}", f"<int:{name}>")
            if f"{method.upper()} {_key(route)}" not in rows:
                missing.append(f"{method.upper()} {path}")
    assert not missing, "operations missing from the matrix:\n" + "\n".join(missing)


@pytest.mark.postgres
def test_every_route_answers_every_role_as_the_matrix_says(world: World) -> None:
    clients = {role: _client(world, role) for role in ROLES}
    wrong: list[str] = []
    leaks: list[str] = []
    observed: list[str] = []
    for method, route in sorted(all_routes(), key=lambda mr: (mr[1], mr[0])):
        # beat's sweep stays fresh as a live beat keeps it (every minute): a slow machine's walk
        # outlasts the two minutes /readyz allows, and the matrix is not about that clock
        Heartbeat.objects.filter(name="sweep").update(at=timezone.now())
        url = _url(route, world)
        row = EXPECTED[f"{method} {_key(route)}"]
        expected = dict(zip(ROLES, P.get(row, row).split(), strict=True))
        got: dict[str, str] = {}
        statuses: dict[str, int] = {}
        for role in ROLES:
            response = _request(clients[role], method, url)
            got[role] = _outcome(response)
            statuses[role] = response.status_code
            if (
                role == "student_b"
                and response.status_code == 200
                and not getattr(response, "streaming", False)
            ):
                body = response.content.decode(errors="replace")
                leaks += [f"{method} {url}: {s!r}" for s in world.secrets_of_a if s and s in body]
        observed.append(f"{method} {route}: {' '.join(got[r] for r in ROLES)}")
        for role in ROLES:
            if expected[role] == "-" and got[role] in {"-", "login", "deny"}:
                continue  # no such method: refused one way or another, before or after login
            if expected[role] != got[role]:
                wrong.append(
                    f"{method} {url} as {role}: expected {expected[role]}, got {got[role]} "
                    f"({statuses[role]})"
                )
    if os.environ.get("MATRIX_PRINT"):
        sys.stdout.write("\n".join(observed) + "\n")
    assert not leaks, "group A's data reached student B:\n" + "\n".join(leaks)
    assert not wrong, f"{len(wrong)} outcomes differ from the matrix:\n" + "\n".join(wrong)


def test_the_matrix_notices_an_unlisted_route(settings) -> None:  # type: ignore[no-untyped-def]
    """Adding a route without a row fails `test_every_route_is_in_the_matrix`."""
    from django.urls import clear_url_caches, path

    import courseops.urls

    extra = path("c/<slug:code>/brand-new/", lambda request, code: None)
    courseops.urls.urlpatterns.append(extra)
    clear_url_caches()
    try:
        with pytest.raises(AssertionError, match="brand-new"):
            test_every_route_is_in_the_matrix()
    finally:
        courseops.urls.urlpatterns.remove(extra)
        clear_url_caches()
