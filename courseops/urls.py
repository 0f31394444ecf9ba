from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from apps.core import ops, views_tokens
from apps.sso import reset as sso_reset
from apps.sso import views as sso_views

urlpatterns = [
    path("healthz", ops.healthz, name="healthz"),
    path("readyz", ops.readyz, name="readyz"),
    path("metrics", ops.metrics, name="metrics"),
    path("", include("apps.core.urls")),
    path("", include("apps.calendar.urls")),
    path("", include("apps.perfcalc.urls")),
    path("", include("apps.groups.urls")),
    path("", include("apps.roster.urls")),
    path("", include("apps.compute.urls")),
    path("", include("apps.slackdays.urls")),
    path("", include("apps.autograder.urls")),
    path("", include("apps.milestones.urls")),
    path("", include("apps.scribing.urls")),
    path("", include("apps.peerreview.urls")),
    path("", include("apps.checkoffs.urls")),
    path("", include("apps.gradebook.urls")),
    path("", include("apps.impact.urls")),
    path("", include("apps.onboarding.urls")),
    path("", include("apps.contributions.urls")),
    path("", include("apps.participation.urls")),
    path("", include("apps.assessments.urls")),
    path("", include("apps.labs.urls")),
    path("", include("apps.sso.urls")),
    path("", include("apps.lti.urls")),
    path("accounts/login/", sso_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/tokens/", views_tokens.tokens_page, name="tokens"),
    path("accounts/tokens/create/", views_tokens.token_make, name="token-create"),
    path(
        "accounts/tokens/<int:token_id>/revoke/",
        views_tokens.token_revoke_view,
        name="token-revoke",
    ),
    path(
        "accounts/password/change/",
        auth_views.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path(
        "accounts/password/change/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("accounts/password/reset/", sso_reset.PasswordResetView.as_view(), name="password_reset"),
    path(
        "accounts/password/reset/sent/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        sso_reset.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/password/reset/complete/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("admin/login/", sso_views.admin_login),  # a password door: shut with PASSWORD_LOGIN=off
    path("admin/", admin.site.urls),
    path("api/v1/", include("apps.core.api.urls")),
    path("api/v1/", include("apps.calendar.api.urls")),
    path("api/v1/", include("apps.perfcalc.api.urls")),
    path("api/v1/", include("apps.groups.api.urls")),
    path("api/v1/", include("apps.roster.api.urls")),
    path("api/v1/", include("apps.compute.api.urls")),
    path("api/v1/", include("apps.slackdays.api.urls")),
    path("api/v1/", include("apps.autograder.api.urls")),
    path("api/v1/", include("apps.milestones.api.urls")),
    path("api/v1/", include("apps.scribing.api.urls")),
    path("api/v1/", include("apps.peerreview.api.urls")),
    path("api/v1/", include("apps.checkoffs.api.urls")),
    path("api/v1/", include("apps.gradebook.api.urls")),
    path("api/v1/", include("apps.impact.api.urls")),
    path("api/v1/", include("apps.onboarding.api.urls")),
    path("api/v1/", include("apps.contributions.api.urls")),
    path("api/v1/", include("apps.participation.api.urls")),
    path("api/v1/", include("apps.assessments.api.urls")),
    path("api/v1/", include("apps.labs.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
]
