from django.urls import path

from apps.sso import saml, views

urlpatterns = [
    path("oidc/authenticate/", views.OIDCStart.as_view(), name="oidc_authentication_init"),
    path(
        "oidc/callback/",
        views.OIDCCallback.as_view(),
        name="oidc_authentication_callback",
    ),
    path("accounts/sso/refused/", views.refused, name="sso-refused"),
    path("accounts/sso/", views.linked_accounts, name="sso-account"),
    path("accounts/sso/link/", views.link_start, name="sso-link"),
    path("saml2/login/", saml.SamlStart.as_view(), name="saml2_login"),
    path("saml2/acs/", saml.SamlAcs.as_view(), name="saml2_acs"),
    path("saml2/metadata/", saml.SamlMetadata.as_view(), name="saml2_metadata"),
]
