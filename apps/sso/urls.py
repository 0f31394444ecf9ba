from django.urls import path
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView

from apps.sso import views

urlpatterns = [
    path("oidc/authenticate/", views.OIDCStart.as_view(), name="oidc_authentication_init"),
    path(
        "oidc/callback/",
        OIDCAuthenticationCallbackView.as_view(),
        name="oidc_authentication_callback",
    ),
    path("accounts/sso/refused/", views.refused, name="sso-refused"),
]
