from django.urls import path

from apps.lti import views

app_name = "lti"
urlpatterns = [
    path("lti/login/", views.lti_login, name="login"),
    path("lti/launch/", views.lti_launch, name="launch"),
    path("lti/link/", views.lti_link, name="link"),
    path("lti/jwks/", views.lti_jwks, name="jwks"),
    path("lti/config.json", views.lti_config, name="config"),
]
