"""Every setting courseops reads from the environment, declared once: its name, its default (as
the text the variable would hold; "" = unset), its type, what it does and the guide section that
explains it. The documentation's configuration reference (`docs/configuration.md`) is generated
from this list at every docs build, and `tests/core/test_env_declared.py` fails when code under
courseops/ or apps/ reads a variable that is not here, or reads it with another default.

To add a variable: declare it here (in its section), then read it with `os.environ.get(NAME,
default)` or the helpers below. This module imports nothing of Django, so settings can use it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Var:
    name: str
    default: str  # what an unset variable means, as the text it would hold ("" = unset)
    kind: str  # str, int, float, bool (on/off, true/false), list (comma-separated), url, path
    help: str
    section: str  # the guide that explains it: a key of SECTIONS
    dev_default: str | None = None  # where `make run` (settings.dev) reads another default
    unset_means: str = ""  # what "unset" does, when it is not just the empty default


# Guide sections, as the reference groups them: (title, where the guide explains it).
SECTIONS = {
    "core": ("Server", "operators.md#configure"),
    "proxy": ("Behind a proxy, HTTPS", "operators.md#configure"),
    "database": ("Database", "operators.md#sizing-the-web-tier"),
    "email": ("E-mail", "operators.md#configure"),
    "login": ("Log-in and lock-outs", "operators.md#lock-outs"),
    "oidc": ("Campus sign-on (OpenID Connect)", "operators.md#campus-sign-on-openid-connect"),
    "saml": ("Campus sign-on (SAML)", "operators.md#campus-sign-on-saml-2-0-shibboleth"),
    "lti": ("The LMS (LTI 1.3)", "operators.md#the-lms-lti-1-3-canvas-bcourses-moodle"),
    "workers": ("Workers and scheduled work", "operators.md#scheduled-work-celery-beat"),
    "grading": ("Grading", "operators.md#grading-at-database-speed"),
    "reminders": ("Reminders", "operators.md#reminders"),
    "cloud": ("The course's GCP project", "operators.md#the-course-s-gcp-project"),
    "monitoring": ("Health and monitoring", "operators.md#health-and-monitoring"),
    "agent": ("The node agent (runs on each node)", "operators.md#health-and-monitoring"),
    "tests": ("Tests only (never set in a deployment)", "design.md"),
}

VARS: tuple[Var, ...] = (
    # Server
    Var(
        "DJANGO_SETTINGS_MODULE",
        "courseops.settings.production",
        "str",
        "Which settings: `manage.py` and Celery use `courseops.settings.dev`, wsgi/asgi "
        "`courseops.settings.production`.",
        "core",
        dev_default="courseops.settings.dev",
    ),
    Var(
        "SECRET_KEY",
        "",
        "str",
        "Signs sessions and tokens; required in production, at least 50 random characters.",
        "core",
        unset_means="development key only",
    ),
    Var(
        "DEBUG",
        "false",
        "bool",
        "Django's debug pages; never on in production.",
        "core",
        dev_default="true",
    ),
    Var(
        "ALLOWED_HOSTS",
        "",
        "list",
        "Host names the server answers, comma-separated.",
        "core",
        dev_default="127.0.0.1,localhost,[::1],testserver",
    ),
    Var(
        "SITE_URL",
        "http://127.0.0.1:8000",
        "url",
        "The address people reach courseops at: "
        "absolute links in e-mails, calendar feeds and sign-on callbacks.",
        "core",
    ),
    Var("LOG_LEVEL", "INFO", "str", "The root logger's level.", "core"),
    Var(
        "COURSE_CACHE_SECONDS",
        "600",
        "int",
        "How long each course's calendar rows stay in "
        "the cache (dropped on every change); 0 turns it off.",
        "core",
    ),
    # Proxy, HTTPS
    Var(
        "CSRF_TRUSTED_ORIGINS",
        "",
        "list",
        "Origins allowed to post, comma-separated, behind "
        "a proxy: e.g. `https://courseops.example.edu`.",
        "proxy",
    ),
    Var(
        "SECURE_SSL_REDIRECT",
        "true",
        "bool",
        "Production redirects http to https; `false` when the proxy already does.",
        "proxy",
    ),
    Var(
        "AXES_PROXY_COUNT",
        "",
        "int",
        "Behind a reverse proxy: how many proxies sit in front, so lock-outs, every door "
        "and /metrics count the client's address (from X-Forwarded-For), not the proxy's.",
        "proxy",
        unset_means="X-Forwarded-For is ignored",
    ),
    # Database
    Var(
        "DATABASE_URL",
        "",
        "url",
        "e.g. `postgres://postgres@127.0.0.1:5432/courseops`. For a PostgreSQL that fails "
        "over (a promoted replica), every host, libpq's way: "
        "`postgres://u@db1:5432,db2:5432/courseops?target_session_attrs=read-write"
        "&connect_timeout=5` — the app connects to whichever host takes writes.",
        "database",
        unset_means="SQLite file db.sqlite3",
    ),
    Var(
        "DB_CONN_MAX_AGE",
        "60",
        "int",
        "Seconds a web process keeps its PostgreSQL connection.",
        "database",
    ),
    Var(
        "DB_SERVER_SIDE_BINDING",
        "true",
        "bool",
        "Server-side parameters, so PostgreSQL prepares the statements a page repeats.",
        "database",
    ),
    Var(
        "REDIS_URL",
        "",
        "url",
        "Celery broker, results and cache, e.g. `redis://127.0.0.1:6379/0`.",
        "database",
        unset_means="Celery runs tasks in-process, local-memory cache",
    ),
    # E-mail
    Var(
        "EMAIL_HOST",
        "",
        "str",
        "The SMTP server.",
        "email",
        unset_means="e-mail printed to the console",
    ),
    Var("EMAIL_PORT", "587", "int", "The SMTP port.", "email"),
    Var("EMAIL_HOST_USER", "", "str", "SMTP user.", "email"),
    Var("EMAIL_HOST_PASSWORD", "", "str", "SMTP password.", "email"),
    Var("EMAIL_USE_TLS", "true", "bool", "STARTTLS to the SMTP server.", "email"),
    Var("DEFAULT_FROM_EMAIL", "courseops <noreply@courseops.local>", "str", "The sender.", "email"),
    Var(
        "SMTP_SEND_CONNECTIONS",
        "3",
        "int",
        "SMTP connections one process sends bulk mail over at once, one thread each.",
        "email",
    ),
    # Log-in
    Var(
        "PASSWORD_LOGIN",
        "on",
        "bool",
        "`off`: campus sign-on only; every password door "
        "(form, admin, API token, reset) answers 403.",
        "login",
    ),
    Var("AXES_FAILURE_LIMIT", "5", "int", "Failed log-ins that lock an account.", "login"),
    Var(
        "COURSEOPS_IP_FAILURE_LIMIT", "100", "int", "Failed log-ins that lock one address.", "login"
    ),
    Var("AXES_COOLOFF_MINUTES", "15", "int", "How long a lock-out lasts.", "login"),
    Var(
        "SIGNON_REFUSALS_PER_IDENTITY",
        "5",
        "int",
        "Refused campus sign-ons (OIDC, SAML) of one identity before it waits out the cool-off; "
        "never counted under a shared name, so strangers lock out nobody else.",
        "login",
    ),
    Var(
        "SIGNON_REFUSALS_PER_ADDRESS",
        "100",
        "int",
        "Refused campus sign-ons from one client address before it waits out the cool-off.",
        "login",
    ),
    Var(
        "CHECKIN_WRONG_CODES",
        "5",
        "int",
        "Wrong check-in codes one student may type per lecture before 429.",
        "login",
    ),
    Var(
        "PASSWORD_RESETS_PER_ADDRESS",
        "3",
        "int",
        "Password-reset e-mails sent to one address per hour (further requests send nothing "
        "and answer the same page).",
        "login",
    ),
    Var(
        "PASSWORD_RESETS_PER_CLIENT",
        "20",
        "int",
        "Password-reset requests from one client address per hour.",
        "login",
    ),
    # OIDC
    Var(
        "OIDC_RP_CLIENT_ID",
        "",
        "str",
        "The client the campus OpenID provider issued to courseops.",
        "oidc",
        unset_means="no OpenID Connect sign-on",
    ),
    Var("OIDC_RP_CLIENT_SECRET", "", "str", "That client's secret.", "oidc"),
    Var(
        "OIDC_OP_AUTHORIZATION_ENDPOINT",
        "",
        "url",
        "The provider's authorization endpoint "
        "(its /.well-known/openid-configuration lists them all).",
        "oidc",
    ),
    Var("OIDC_OP_TOKEN_ENDPOINT", "", "url", "The provider's token endpoint.", "oidc"),
    Var("OIDC_OP_USER_ENDPOINT", "", "url", "The provider's userinfo endpoint.", "oidc"),
    Var("OIDC_OP_JWKS_ENDPOINT", "", "url", "The provider's signing keys.", "oidc"),
    Var("OIDC_RP_SIGN_ALGO", "RS256", "str", "The ID token's signature algorithm.", "oidc"),
    Var("OIDC_RP_SCOPES", "openid email profile", "str", "The scopes asked for.", "oidc"),
    Var(
        "OIDC_EMAIL_CLAIM",
        "email",
        "str",
        "The claim that carries the e-mail (e.g. `upn`).",
        "oidc",
    ),
    Var(
        "OIDC_REQUIRE_EMAIL_VERIFIED",
        "on",
        "bool",
        "`off` accepts a provider that sends no "
        "`email_verified` (only a campus IdP that vouches for every address).",
        "oidc",
    ),
    Var(
        "OIDC_BUTTON_LABEL", "Log in with your campus account", "str", "The log-in button.", "oidc"
    ),
    Var("SSO_HELP_CONTACT", "", "str", "Whom a refused sign-on is told to ask.", "oidc"),
    # SAML
    Var(
        "SAML_IDP_METADATA_URL",
        "",
        "url",
        "The campus IdP's metadata (e.g. InCommon's per-entity URL).",
        "saml",
        unset_means="no SAML sign-on",
    ),
    Var("SAML_IDP_METADATA_FILE", "", "path", "Or the metadata as a file.", "saml"),
    Var(
        "SAML_SP_KEY_FILE",
        "",
        "path",
        "courseops's own private key as a service provider (PEM).",
        "saml",
    ),
    Var("SAML_SP_CERT_FILE", "", "path", "Its certificate (PEM).", "saml"),
    Var(
        "SAML_SP_ENTITY_ID",
        "",
        "str",
        "courseops's entity id.",
        "saml",
        unset_means="<SITE_URL>/saml2/metadata/",
    ),
    Var(
        "SAML_XMLSEC_BINARY",
        "/usr/bin/xmlsec1",
        "path",
        "The xmlsec1 program pysaml2 signs and verifies with.",
        "saml",
    ),
    Var("SAML_EMAIL_ATTRIBUTE", "mail", "str", "The attribute with the e-mail.", "saml"),
    Var(
        "SAML_SUBJECT_ATTRIBUTES",
        "eduPersonPrincipalName uid",
        "str",
        "The person's stable "
        "id when the IdP sends no persistent NameID: the first of these released.",
        "saml",
    ),
    Var(
        "SAML_BUTTON_LABEL",
        "Log in with campus SAML (Shibboleth)",
        "str",
        "The SAML button.",
        "saml",
    ),
    Var(
        "SAML_SESSION_COOKIE_SAMESITE",
        "None",
        "str",
        "The SAML request cookie; `None` (with "
        "HTTPS) lets it come back on the IdP's cross-site POST.",
        "saml",
    ),
    # LTI
    Var(
        "LTI_ROSTER_SYNC_EVERY_S",
        "",
        "float",
        "How often beat reads every linked course's roster from the LMS.",
        "lti",
        unset_means="off",
    ),
    # Workers
    Var(
        "CELERY_VISIBILITY_TIMEOUT",
        "",
        "int",
        "Seconds before Redis hands an unacknowledged task (its worker died) to another worker.",
        "workers",
        unset_means="twice the task time limit",
    ),
    Var(
        "JOB_SWEEP_EVERY_S",
        "60",
        "float",
        "How often beat re-queues work whose lease ran out.",
        "workers",
    ),
    Var(
        "BEAT_LOCK_TIMEOUT_S",
        "30",
        "int",
        "Seconds a `celery beat` holds the scheduling lock in Redis without renewing it; a beat "
        "that died or was cut off is replaced by a standby beat within this plus 5 s.",
        "workers",
    ),
    Var(
        "FORMATION_EVERY_S",
        "300",
        "float",
        "How often beat runs allocation at group formation.",
        "workers",
    ),
    Var(
        "RETENTION_EVERY_S",
        "3600",
        "float",
        "How often beat runs the study retention sweep.",
        "workers",
    ),
    Var(
        "SUGGEST_INLINE_MAX",
        "40",
        "int",
        "Group suggestions for more people are computed by a worker.",
        "workers",
    ),
    Var(
        "SCRIBING_INLINE_MAX_STUDENTS",
        "300",
        "int",
        "Scribe assignments for more students are solved by a worker.",
        "workers",
    ),
    # Grading
    Var("GRADING_WORKERS", "2", "int", "Celery processes that take grading chunks.", "grading"),
    Var("AUTOGRADER_CHUNK_MAX", "2500", "int", "Most students in one grading chunk.", "grading"),
    Var(
        "AUTOGRADER_CHUNK_TIME_LIMIT_S",
        "60",
        "int",
        "A grading chunk's time limit (its lease is this + 15 s).",
        "grading",
    ),
    Var(
        "AUTOGRADER_UPLOAD_LEASE_S",
        "600",
        "int",
        "How long an upload being read is held before another worker takes it over.",
        "grading",
    ),
    Var(
        "AUTOGRADER_CHUNK_PAUSE_S",
        "0",
        "float",
        "Seconds each chunk waits before it starts: demos and tests only.",
        "grading",
    ),
    # Reminders
    Var("REMINDER_EVERY_S", "300", "float", "How often beat sends due reminders.", "reminders"),
    Var(
        "REMINDER_BATCH",
        "1000",
        "int",
        "Reminders claimed, rendered and sent together.",
        "reminders",
    ),
    Var(
        "REMINDER_MAX_ATTEMPTS",
        "8",
        "int",
        "Tries before a refused reminder is given up.",
        "reminders",
    ),
    Var(
        "REMINDER_RETRY_BASE_S",
        "60",
        "int",
        "The first retry's delay (doubling, at most an hour).",
        "reminders",
    ),
    Var(
        "REMINDER_RETRY_GRACE_S",
        "300",
        "int",
        "A reminder claimed and never tried is taken over after this.",
        "reminders",
    ),
    # Cloud
    Var(
        "COMPUTE_PROVIDER",
        "dry-run",
        "str",
        "`dry-run` or `gcp`; a start-up check refuses any other name.",
        "cloud",
    ),
    Var(
        "COMPUTE_ENDPOINT",
        "",
        "url",
        "Another Compute Engine endpoint with anonymous "
        "credentials (the tests' peer); empty in production.",
        "cloud",
    ),
    Var("COMPUTE_NETWORK", "default", "str", "The VPC the window firewall rules go on.", "cloud"),
    Var("COMPUTE_CALL_TIMEOUT_S", "60", "float", "One cloud call's time limit.", "cloud"),
    Var(
        "COMPUTE_OP_LEASE_S",
        "300",
        "int",
        "How long a running cloud job holds its target.",
        "cloud",
    ),
    Var("COMPUTE_OP_MAX_ATTEMPTS", "6", "int", "Tries of a cloud job.", "cloud"),
    Var(
        "COMPUTE_OP_BACKOFF_S",
        "5",
        "float",
        "The first retry's delay (doubling, at most 5 min).",
        "cloud",
    ),
    Var(
        "CLOUD_RECONCILE_EVERY_S",
        "120",
        "float",
        "How often beat reads node statuses and fixes drift.",
        "cloud",
    ),
    Var(
        "CLOUD_WATCH_EVERY_S",
        "900",
        "float",
        "How often beat checks idle nodes and the budget.",
        "cloud",
    ),
    Var(
        "COMPUTE_RATE_LIMIT_WAIT_S",
        "60",
        "float",
        "How long a cloud job waits after Compute Engine's 403 rateLimitExceeded or 429 before "
        "it tries again (Google: wait a minute).",
        "cloud",
    ),
    Var(
        "COMPUTE_PAGE_SIZE",
        "500",
        "int",
        "maxResults on every Compute Engine list call (0-500); pages are followed.",
        "cloud",
    ),
    Var(
        "USAGE_RULES_EVERY_S",
        "300",
        "float",
        "How often beat applies GPU-hour quotas, the nightly shutdown and the unknown-node check.",
        "cloud",
    ),
    # Monitoring
    Var(
        "METRICS_TOKEN",
        "",
        "str",
        "The bearer token Prometheus sends for /metrics.",
        "monitoring",
        unset_means="/metrics answers 404",
    ),
    Var(
        "METRICS_TRUST_LOOPBACK",
        "false",
        "bool",
        "Loopback callers need no token; behind a proxy, the client's loopback (AXES_PROXY_COUNT).",
        "monitoring",
        dev_default="true",
    ),
    Var(
        "METRICS_ALLOW_FROM",
        "",
        "list",
        "Addresses or networks (e.g. `10.20.0.5/32`) whose /metrics scrapes need no token, "
        "matched against the client's address behind AXES_PROXY_COUNT proxies.",
        "monitoring",
        unset_means="only a token opens /metrics",
    ),
    # The node agent
    Var("COURSEOPS_URL", "", "url", "Where the agent on a node reports.", "agent"),
    Var("COURSEOPS_TOKEN", "", "str", "The node's agent token.", "agent"),
    Var(
        "COURSEOPS_AGENT_FAKE_SMI",
        "",
        "path",
        "A file read instead of nvidia-smi (tests).",
        "agent",
    ),
    # Tests and tooling
    Var("TEST_DATABASE_NAME", "test_courseops", "str", "The test database.", "tests"),
    Var(
        "TEST_REDIS_URL", "redis://127.0.0.1:6379/15", "url", "The tests' Redis database.", "tests"
    ),
    Var("TEST_EMAIL_DIR", "", "path", "Tests: e-mail written as files here.", "tests"),
    Var(
        "TEST_EMAIL_SMTP_PORT",
        "",
        "int",
        "Tests: e-mail sent to an SMTP sink on this port.",
        "tests",
    ),
    Var(
        "PYTEST_XDIST_WORKER",
        "",
        "str",
        "Set by pytest-xdist; each worker its own Redis database.",
        "tests",
    ),
    Var(
        "RUN_MAIN",
        "",
        "str",
        "Set by Django's autoreloader in the child that serves (`make run`).",
        "tests",
    ),
    Var(
        "DJANGO_RUNSERVER_HIDE_WARNING",
        "",
        "str",
        "Set by `make run` to hide runserver's development-server warning.",
        "tests",
    ),
)

BY_NAME = {v.name: v for v in VARS}


def declared(name: str) -> Var:
    """The declaration of `name`; KeyError (at start-up) for a variable nobody declared."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(
            f"{name} is read from the environment but not declared in courseops/settings/env.py"
        ) from None


def env_str(name: str, default: str | None = None) -> str:
    """The variable's text, or its declared default (settings.dev passes its own)."""
    var = declared(name)
    return os.environ.get(name, var.default if default is None else default)


def env_bool(name: str, default: bool) -> bool:
    declared(name)
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    declared(name)
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]
