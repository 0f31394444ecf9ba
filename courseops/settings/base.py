"""Settings shared by every environment; each value that differs per machine comes from the env.

Every environment variable read here (or anywhere under courseops/ and apps/) is declared once
in `courseops/settings/env.py` — name, default, type, help, guide section — which the
configuration reference in the docs is generated from; tests/core/test_env_declared.py fails on
a read that is not declared or whose default differs from the declaration.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from .database import parse_database_url
from .env import env_bool, env_list

BASE_DIR = Path(__file__).resolve().parent.parent.parent


SECRET_KEY = os.environ.get("SECRET_KEY", "")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
SITE_URL = os.environ.get("SITE_URL", "http://127.0.0.1:8000")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "axes",
    "drf_spectacular",
    "django_prometheus",
    "drf_spectacular_sidecar",
    "apps.core",
    "apps.calendar",
    "apps.groups",
    "apps.compute",
    "apps.perfcalc",
    "apps.roster",
    "apps.slackdays",
    "apps.autograder",
    "apps.milestones",
    "apps.scribing",
    "apps.peerreview",
    "apps.checkoffs",
    "apps.assessments",
    "apps.onboarding",
    "apps.contributions",
    "apps.impact",
    "apps.extensions",
    "apps.participation",
    "apps.labs",
    "apps.integrity",  # similarity checks across groups; reads groups and milestones
    "djangosaml2",  # SAML 2.0 service provider (campus Shibboleth)
    "apps.sso",  # campus sign-on (OpenID Connect, SAML 2.0)
    "apps.lti.toolconfig.ToolConfig",  # pylti1p3: LMS registrations and the tool's key pair
    "apps.lti",  # LTI 1.3 launches from the LMS
    "apps.gradebook",  # reads the apps above it; none of them imports it
    "apps.setup",  # last: course files and the demo, composed from every app above
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "djangosaml2.middleware.SamlSessionMiddleware",  # SAML's pending requests (own cookie)
    "django.middleware.common.CommonMiddleware",
    "apps.core.textguard.ControlCharactersMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "apps.core.middleware.ApiJsonErrorsMiddleware",
    # Last, so it sees the flag the login view's authenticate() set (django-axes' rule).
    "axes.middleware.AxesMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]
# /metrics (Prometheus): `Authorization: Bearer $METRICS_TOKEN`; off (404) without a token. Loopback
# callers need none only where METRICS_TRUST_LOOPBACK is on (development: never behind a proxy).
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
METRICS_TRUST_LOOPBACK = env_bool("METRICS_TRUST_LOOPBACK", False)
# Addresses or networks (e.g. a campus Prometheus: 10.20.0.5/32) whose scrapes need no token, as
# the client's address is read behind AXES_PROXY_COUNT proxies (apps/core/addresses.py).
METRICS_ALLOW_FROM = env_list("METRICS_ALLOW_FROM")

ROOT_URLCONF = "courseops.urls"
WSGI_APPLICATION = "courseops.wsgi.application"
ASGI_APPLICATION = "courseops.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "apps.core.context_processors.navigation",
            ],
        },
    },
]

# A host list (`h1:p1,h2:p2`, libpq's multi-host form) is how the app follows a failover
# (courseops/settings/database.py). Health checks: a persistent connection is tested before a
# request reuses it, so one left dead by a failover is dropped and the next query reconnects.
DATABASES = {
    "default": parse_database_url(
        os.environ.get("DATABASE_URL", "") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"].endswith("postgresql") and env_bool(
    "DB_SERVER_SIDE_BINDING", True
):
    # Server-side parameters let psycopg prepare the statements a page repeats on a persistent
    # connection, so PostgreSQL stops re-planning them (bench/load.py: PostgreSQL CPU per request).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        server_side_binding=True, prepare_threshold=5
    )
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # make run's SQLite file: write-ahead logging, synced at checkpoints rather than at every
    # commit (a first start's migrations and demo are ~1,600 commits; on a slow disk each sync
    # costs milliseconds). A crash can lose the last commits of a demo, never corrupt the file.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "core.User"
# django-axes first: it refuses a locked-out account before any password is checked, for the
# login form, the admin login and the API token endpoint alike (they all call authenticate()).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Django's ModelBackend with the per-request user read compiled once (apps/core/backends.py).
    # Sessions name their backend: ones made under django.contrib.auth's path log in again once.
    "apps.core.backends.ModelBackend",
    # Campus sign-on (OpenID Connect): does nothing until OIDC_RP_CLIENT_ID is set.
    "apps.sso.backends.CampusOIDCBackend",
    # Campus sign-on (SAML 2.0): does nothing until SAML_IDP_METADATA_URL or …_FILE is set.
    "apps.sso.saml.CampusSaml2Backend",
]
# --- Campus sign-on, all from the environment (docs/operators.md, "Campus sign-on"). The provider's
# endpoints are in its /.well-known/openid-configuration; secrets are never logged.
OIDC_RP_CLIENT_ID = os.environ.get("OIDC_RP_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = os.environ.get("OIDC_RP_CLIENT_SECRET", "")
OIDC_OP_AUTHORIZATION_ENDPOINT = os.environ.get("OIDC_OP_AUTHORIZATION_ENDPOINT", "")
OIDC_OP_TOKEN_ENDPOINT = os.environ.get("OIDC_OP_TOKEN_ENDPOINT", "")
OIDC_OP_USER_ENDPOINT = os.environ.get("OIDC_OP_USER_ENDPOINT", "")
OIDC_OP_JWKS_ENDPOINT = os.environ.get("OIDC_OP_JWKS_ENDPOINT", "")
OIDC_RP_SIGN_ALGO = os.environ.get("OIDC_RP_SIGN_ALGO", "RS256")
OIDC_RP_SCOPES = os.environ.get("OIDC_RP_SCOPES", "openid email profile")
OIDC_EMAIL_CLAIM = os.environ.get("OIDC_EMAIL_CLAIM", "email")  # the claim that carries it
OIDC_REQUIRE_EMAIL_VERIFIED = os.environ.get("OIDC_REQUIRE_EMAIL_VERIFIED", "on") != "off"
OIDC_BUTTON_LABEL = os.environ.get("OIDC_BUTTON_LABEL", "Log in with your campus account")
OIDC_USE_PKCE = True
OIDC_CREATE_USER = False  # people come from rosters, never from the provider
OIDC_TIMEOUT = 10
LOGIN_REDIRECT_URL_FAILURE = "/accounts/sso/refused/"
SSO_HELP_CONTACT = os.environ.get("SSO_HELP_CONTACT", "")
# SAML 2.0 (djangosaml2): the IdP's metadata (URL or file), the SP's key pair, the attribute
# with the e-mail. Unset: no SAML button, its URLs 404.
SAML_EMAIL_ATTRIBUTE = os.environ.get("SAML_EMAIL_ATTRIBUTE", "mail")
# Who the person is at the IdP when it sends no persistent NameID: the first of these present.
SAML_SUBJECT_ATTRIBUTES = tuple(
    os.environ.get("SAML_SUBJECT_ATTRIBUTES", "eduPersonPrincipalName uid").split()
)
SAML_BUTTON_LABEL = os.environ.get("SAML_BUTTON_LABEL", "Log in with campus SAML (Shibboleth)")
SAML_CREATE_UNKNOWN_USER = False
SAML_DJANGO_USER_MAIN_ATTRIBUTE = "email"
SAML_DJANGO_USER_MAIN_ATTRIBUTE_LOOKUP = "__iexact"
SAML_ATTRIBUTE_MAPPING = {SAML_EMAIL_ATTRIBUTE: ("email",)}
SAML_ACS_FAILURE_RESPONSE_FUNCTION = "apps.sso.saml.acs_failure"
SAML_SESSION_COOKIE_SAMESITE = os.environ.get("SAML_SESSION_COOKIE_SAMESITE", "None")
SAML_CONFIG: dict[str, object] = {}
if os.environ.get("SAML_IDP_METADATA_URL") or os.environ.get("SAML_IDP_METADATA_FILE"):
    from apps.sso.saml_settings import from_environment

    SAML_CONFIG = from_environment(os.environ.get("SITE_URL", "http://127.0.0.1:8000"))
# PASSWORD_LOGIN=off: the campus sign-on only (the demo and development keep passwords).
PASSWORD_LOGIN = os.environ.get("PASSWORD_LOGIN", "on") != "off"
# Lock-out policy. Per account: the main defence, 5 wrong passwords in 15 minutes lock that
# account for 15 minutes after the last try. Per IP: generous, because a lecture hall shares one
# campus NAT; 100 failures from one address in 15 minutes lock that address.
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
COURSEOPS_IP_FAILURE_LIMIT = int(os.environ.get("COURSEOPS_IP_FAILURE_LIMIT", "100"))
AXES_COOLOFF_TIME = dt.timedelta(minutes=int(os.environ.get("AXES_COOLOFF_MINUTES", "15")))
AXES_HANDLER = "apps.core.lockout.CourseopsAxesHandler"
AXES_LOCKOUT_CALLABLE = "apps.core.lockout.lockout_response"
AXES_USERNAME_CALLABLE = "apps.core.lockout.username_of"
AXES_RESET_ON_SUCCESS = True
AXES_ENABLE_ACCESS_FAILURE_LOG = True
# Only password tries are axes' business: a campus sign-on (OIDC, SAML) carries no password and
# no username, so axes would count it under the empty name and lock every sign-on at once. Its
# refusals are counted per identity and per address instead (apps/core/doors.py).
AXES_WHITELIST_CALLABLE = "apps.core.lockout.not_a_password_try"
AXES_VERBOSE = False
# Behind a proxy, set AXES_PROXY_COUNT (e.g. 1) so the client's address is read from
# X-Forwarded-For; without it every request appears to come from the proxy.
# Without it, X-Forwarded-For is ignored (a client could forge it). Read by our own callable
# (django-ipware, axes' default reader, is not installed: axes would fall back to REMOTE_ADDR).
_PROXY_COUNT = os.environ.get("AXES_PROXY_COUNT", "")
AXES_IPWARE_PROXY_COUNT = int(_PROXY_COUNT) if _PROXY_COUNT else None
AXES_CLIENT_IP_CALLABLE = "apps.core.addresses.client_address"
AXES_IPWARE_META_PRECEDENCE_ORDER = (
    ["HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"] if _PROXY_COUNT else ["REMOTE_ADDR"]
)


# Limits on every other door a stranger can knock on (apps/core/doors.py has the table and the
# reasons; docs/operators.md, "Limits on every door"): tries per key in a window, counted in the
# database. Sign-on refusals (OIDC, SAML) per campus identity and per address; wrong check-in
# codes per student per lecture; password-reset e-mails per address asked for and per address
# asking.
_COOLOFF_S = int(AXES_COOLOFF_TIME.total_seconds())
DOOR_LIMITS = {
    "signon-identity": {
        "tries": int(os.environ.get("SIGNON_REFUSALS_PER_IDENTITY", "5")),
        "window_s": _COOLOFF_S,
    },
    "signon-address": {
        "tries": int(os.environ.get("SIGNON_REFUSALS_PER_ADDRESS", "100")),
        "window_s": _COOLOFF_S,
    },
    "checkin-code": {
        "tries": int(os.environ.get("CHECKIN_WRONG_CODES", "5")),
        "window_s": 24 * 3600,
    },
    "reset-address": {
        "tries": int(os.environ.get("PASSWORD_RESETS_PER_ADDRESS", "3")),
        "window_s": 3600,
    },
    "reset-client": {
        "tries": int(os.environ.get("PASSWORD_RESETS_PER_CLIENT", "20")),
        "window_s": 3600,
    },
}

# Content-Security-Policy (django-csp): nothing inline, nothing from another origin.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "core:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"  # stored instants are UTC; pages show each course's own zone
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# Email: console by default; set EMAIL_HOST for SMTP.
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "courseops <noreply@courseops.local>")
if os.environ.get("EMAIL_HOST"):
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_HOST = os.environ["EMAIL_HOST"]
    EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "587"))
    EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"

# --- Celery: eager in-process when REDIS_URL is unset (embedded default), real broker otherwise.
REDIS_URL = os.environ.get("REDIS_URL", "")
CELERY_TASK_TIME_LIMIT = 60 * 60  # the longest task may run an hour
CELERY_TASK_SOFT_TIME_LIMIT = 55 * 60
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = False
else:
    CELERY_BROKER_URL = "memory://localhost/"  # a host named: kombu warns of none otherwise
    CELERY_RESULT_BACKEND = "cache+memory://"
    CELERY_TASK_ALWAYS_EAGER = True
    CELERY_TASK_EAGER_PROPAGATES = True
# A task is acknowledged only after it finishes, and re-queued if its worker dies mid-task,
# so every task must be idempotent (services upsert).  The broker waits longer than the
# longest task before handing an unacknowledged message to another worker.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int(
        os.environ.get("CELERY_VISIBILITY_TIMEOUT", 2 * CELERY_TASK_TIME_LIMIT)
    )
}
# Seconds each grading chunk waits before it starts (0 = none). For demos of the progress bar and
# for the test that kills a worker mid-run; never needed in production.
AUTOGRADER_CHUNK_PAUSE_S = float(os.environ.get("AUTOGRADER_CHUNK_PAUSE_S", "0"))
# A broker restart takes a few seconds: publishing retries for about 7 s before it gives up
# (apps.core.queue then answers 503 or logs, depending on the work).
CELERY_TASK_PUBLISH_RETRY = True
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 6,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 2,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_RESULT_EXPIRES = 24 * 60 * 60
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
# Reminders: every 5 minutes, so a "6 hours before" e-mail leaves within 5 minutes of its moment.
# Each reminder is claimed by a unique row, so an overlapping or repeated run sends nothing twice.
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    "send-reminders": {
        "task": "calendar.send_reminders",
        "schedule": float(os.environ.get("REMINDER_EVERY_S", "300")),
        "options": {"expires": 290},
    },
    # At each course's group-formation deadline, a node and an IP per group (compute.formation).
    "allocate-at-formation": {
        "task": "compute.allocate_at_formation",
        "schedule": float(os.environ.get("FORMATION_EVERY_S", "300")),
        "options": {"expires": 290},
    },
    # The study protocol's retention rule (apps.assessments.study): hourly is plenty.
    "study-retention": {
        "task": "assessments.retention_sweep",
        "schedule": float(os.environ.get("RETENTION_EVERY_S", "3600")),
        "options": {"expires": 3500},
    },
    # Take over the work of a worker that died (apps.core.jobs): within a lease plus this.
    "sweep-jobs": {
        "task": "core.sweep_jobs",
        "schedule": float(os.environ.get("JOB_SWEEP_EVERY_S", "60")),
        "options": {"expires": 55},
    },
}
# The cloud (apps.compute.cloud): `dry-run` keeps a stand-in project in the database; `gcp` drives
# the course's project with Application Default Credentials. COMPUTE_ENDPOINT points the client
# at another Compute Engine endpoint (the tests' local peer) with anonymous credentials.
COMPUTE_PROVIDER = os.environ.get("COMPUTE_PROVIDER", "dry-run")
COMPUTE_ENDPOINT = os.environ.get("COMPUTE_ENDPOINT", "")
COMPUTE_NETWORK = os.environ.get("COMPUTE_NETWORK", "default")
COMPUTE_CALL_TIMEOUT_S = float(os.environ.get("COMPUTE_CALL_TIMEOUT_S", "60"))
COMPUTE_OP_LEASE_S = int(os.environ.get("COMPUTE_OP_LEASE_S", "300"))
COMPUTE_OP_MAX_ATTEMPTS = int(os.environ.get("COMPUTE_OP_MAX_ATTEMPTS", "6"))
COMPUTE_OP_BACKOFF_S = float(os.environ.get("COMPUTE_OP_BACKOFF_S", "5"))
# Over a rate quota Compute Engine answers 403 rateLimitExceeded: wait a minute, then retry
# (https://cloud.google.com/compute/api-quota). A rate-limited job waits at least this long.
COMPUTE_RATE_LIMIT_WAIT_S = float(os.environ.get("COMPUTE_RATE_LIMIT_WAIT_S", "60"))
# maxResults on every list call (the API allows 0-500); the client follows nextPageToken.
COMPUTE_PAGE_SIZE = int(os.environ.get("COMPUTE_PAGE_SIZE", "500"))
# Statuses, drift and window rules every 2 minutes; idle nodes and the budget every 15.
CELERY_BEAT_SCHEDULE["cloud-reconcile"] = {
    "task": "compute.reconcile_cloud",
    "schedule": float(os.environ.get("CLOUD_RECONCILE_EVERY_S", "120")),
    "options": {"expires": 110},
}
CELERY_BEAT_SCHEDULE["cloud-watch"] = {
    "task": "compute.watch_usage",
    "schedule": float(os.environ.get("CLOUD_WATCH_EVERY_S", "900")),
    "options": {"expires": 890},
}
# Quotas and schedules per group (apps.compute.usage.tasks): the nightly shutdown within 5
# minutes of its time, quota warnings and stops, and nodes silent for 30 minutes.
CELERY_BEAT_SCHEDULE["usage-rules"] = {
    "task": "compute.usage_rules",
    "schedule": float(os.environ.get("USAGE_RULES_EVERY_S", "300")),
    "options": {"expires": 290},
}
# The LMS roster, synced by beat: off unless LTI_ROSTER_SYNC_EVERY_S is set (e.g. 86400).
if os.environ.get("LTI_ROSTER_SYNC_EVERY_S"):
    CELERY_BEAT_SCHEDULE["lti-roster-sync"] = {
        "task": "lti.sync_rosters",
        "schedule": float(os.environ["LTI_ROSTER_SYNC_EVERY_S"]),
    }
# More than one `celery beat` may run (one per host, for failover): exactly one schedules. RedBeat
# keeps the schedule (each entry's last run) in Redis and lets only the holder of a lock there
# tick; the others wait for it. The holder renews the lock at every tick (at most
# CELERY_BEAT_MAX_LOOP_INTERVAL apart) and a dead or cut-off holder's lock lapses after
# BEAT_LOCK_TIMEOUT_S, so another beat takes over within that plus one loop (35 s) and, reading
# the same last runs, fires nothing twice. A holder that cannot reach Redis for 5 s
# (socket_timeout) exits rather than waiting, so it never resumes from a stale view: run beat
# under a supervisor that restarts it (systemd Restart=always); it comes back as a standby.
# Without REDIS_URL (tasks run eagerly, no broker) beat has nothing to send to: Celery's default.
if REDIS_URL:
    CELERY_BEAT_SCHEDULER = "redbeat.RedBeatScheduler"
CELERY_BEAT_MAX_LOOP_INTERVAL = 5
CELERY_REDBEAT_REDIS_URL = REDIS_URL
CELERY_REDBEAT_KEY_PREFIX = "courseops:beat:"
CELERY_REDBEAT_LOCK_TIMEOUT = int(os.environ.get("BEAT_LOCK_TIMEOUT_S", "30"))
CELERY_REDBEAT_REDIS_OPTIONS = {"socket_timeout": 5, "socket_connect_timeout": 5}
# A grading chunk takes about a second; its time limit bounds a stuck one and its lease
# (time limit + a margin) is how long a dead worker's chunk waits before another worker takes it.
AUTOGRADER_CHUNK_TIME_LIMIT_S = int(os.environ.get("AUTOGRADER_CHUNK_TIME_LIMIT_S", "60"))
AUTOGRADER_CHUNK_LEASE_S = AUTOGRADER_CHUNK_TIME_LIMIT_S + 15
# A grading pass is cut into a multiple of GRADING_WORKERS chunks (the Celery processes that take
# grading work) of at most AUTOGRADER_CHUNK_MAX students (~1 s of work each on one core).
GRADING_WORKERS = int(os.environ.get("GRADING_WORKERS", "2"))
AUTOGRADER_CHUNK_MAX = int(os.environ.get("AUTOGRADER_CHUNK_MAX", "2500"))
# Reading a 50 MB answers file takes under a minute; the lease leaves room for a slow worker.
AUTOGRADER_UPLOAD_LEASE_S = int(os.environ.get("AUTOGRADER_UPLOAD_LEASE_S", "600"))
JOB_TAKEOVERS_MAX = 3  # a job taken over this many times ends as failed, with the reason

CACHES = {
    "default": (
        {"BACKEND": "apps.core.cache.RedisCache", "LOCATION": REDIS_URL}
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
# Sessions are read from Redis on every request (written through to the database, so a Redis
# restart logs nobody out); without Redis, from the database.
if REDIS_URL:
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
# Reminders and other bulk mail go out over this many SMTP connections at once (one thread each).
SMTP_SEND_CONNECTIONS = int(os.environ.get("SMTP_SEND_CONNECTIONS", "3"))
# A reminder run claims, renders and sends in batches of this many e-mails; the beat task sends
# the first batch itself and hands the others to the workers (each a task of its own).
REMINDER_BATCH = int(os.environ.get("REMINDER_BATCH", "1000"))
# A reminder the SMTP server refused or broke off is sent again by the job sweep (every minute)
# after a back-off doubling from REMINDER_RETRY_BASE_S up to an hour; after REMINDER_MAX_ATTEMPTS
# it is given up, with the reason on the Jobs page. One claimed but never tried (its worker died)
# is taken over REMINDER_RETRY_GRACE_S after its claim.
REMINDER_MAX_ATTEMPTS = int(os.environ.get("REMINDER_MAX_ATTEMPTS", "8"))
REMINDER_RETRY_BASE_S = int(os.environ.get("REMINDER_RETRY_BASE_S", "60"))
REMINDER_RETRY_GRACE_S = int(os.environ.get("REMINDER_RETRY_GRACE_S", "300"))
# Group suggestions for more people than this are computed, and accepted, by a worker (about
# 2 s for 40 in the request; 2,000 take about 35 s on a worker, in blocks, with progress on the
# page, and about 10 s to accept).
SUGGEST_INLINE_MAX = int(os.environ.get("SUGGEST_INLINE_MAX", "40"))
# Scribe assignments for up to this many students are solved inside the request (well under a
# second); larger courses are solved by a worker (2,000 students: about 20 s).
SCRIBING_INLINE_MAX_STUDENTS = int(os.environ.get("SCRIBING_INLINE_MAX_STUDENTS", "300"))
# A course's calendar (assignments, milestones, lectures, events, recess) is read on almost every
# page and changes a few times a term: kept in the cache this many seconds, dropped on every
# save or delete of those rows (apps.calendar.cache). 0 turns it off.
COURSE_CACHE_SECONDS = int(os.environ.get("COURSE_CACHE_SECONDS", "600"))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an unauthenticated call gets 401 with WWW-Authenticate, not 403.
        "apps.core.backends.TokenAuthentication",  # DRF's, its read compiled once
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "apps.core.api.pagination.StandardPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "apps.core.api.exceptions.exception_handler",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    # JSON bodies only; the upload endpoints add multipart themselves. Fewer body shapes means
    # fewer ways for a nested field (e.g. answers) to arrive half-parsed.
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
}

SPECTACULAR_SETTINGS = {
    "TITLE": "courseops API",
    "DESCRIPTION": (
        "Operations of a project-heavy ML-systems course: courses, groups, nodes, slack days, "
        "autograding. Authenticate with a session or with `Authorization: Token <key>` "
        "(POST /api/v1/auth/token/)."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # A PATCH here takes the same required fields as the create (renames send the name).
    "COMPONENT_SPLIT_PATCH": False,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "apps.core.api.schema.add_error_responses",
    ],
    "ENUM_NAME_OVERRIDES": {
        "ImpactKindEnum": "apps.impact.models.KINDS",
        "ProposalKindEnum": "apps.contributions.models.KINDS",
        "ParticipationKindEnum": "apps.participation.models.KINDS",
        "WeightPrecisionEnum": "apps.perfcalc.calc.formulas.common.WEIGHT_PRECISIONS",
        "TrainingPrecisionEnum": "apps.perfcalc.calc.formulas.common.TRAINING_PRECISIONS",
        "PeakPrecisionEnum": "apps.perfcalc.calc.catalog.PRECISIONS",
        "BubbleConventionEnum": "apps.perfcalc.calc.formulas.scaling.BUBBLE_CONVENTION_NAMES",
        "RingConventionEnum": "apps.perfcalc.calc.formulas.communication.RING_CONVENTIONS",
        "TrainingRecipeEnum": "apps.perfcalc.calc.formulas.parallelism.RECIPES",
        "CheckpointRecipeEnum": "apps.perfcalc.calc.formulas.reliability.CHECKPOINT_RECIPES",
        "NodeStatusEnum": "apps.compute.models.Node.Status",
        "StaticIPStatusEnum": "apps.compute.models.StaticIP.Status",
        "WindowStatusEnum": "apps.compute.models.SharingWindow.Status",
        "IncidentStatusEnum": "apps.compute.models.Incident.Status",
        "LedgerKindEnum": "apps.slackdays.models.LedgerEntry.Kind",
        "ExceptionKindEnum": "apps.slackdays.models.DeadlineException.Kind",
        "CheckoffSetKindEnum": "apps.checkoffs.models.CheckoffSet.Kind",
        "AttendanceEnum": "apps.checkoffs.models.Booking.Attendance",
        "CheckoffOutcomeEnum": "apps.checkoffs.models.Booking.Outcome",
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        "axes": {"level": "WARNING"},
        # pysaml2's schema loader reports each XSD it reads at INFO: noise, not news.
        "xmlschema": {"level": "WARNING"},
        # Eager tasks (make run) would print "Task … succeeded" into the console; workers say it.
        "celery.app.trace": {"level": "WARNING" if not REDIS_URL else "INFO"},
    },
}
