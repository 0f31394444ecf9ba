from django.urls import path

from apps.lti import views, views_lms

app_name = "lti"
urlpatterns = [
    path("lti/login/", views.lti_login, name="login"),
    path("lti/launch/", views.lti_launch, name="launch"),
    path("lti/link/", views.lti_link, name="link"),
    path("lti/account/", views.lti_account, name="account"),
    path("lti/jwks/", views.lti_jwks, name="jwks"),
    path("lti/config.json", views.lti_config, name="config"),
    path("c/<slug:code>/lms/", views_lms.lms_page, name="lms"),
    path("c/<slug:code>/lms/roster/", views_lms.roster_sync, name="lms-roster"),
    path("c/<slug:code>/lms/grades/", views_lms.grades_push, name="lms-grades"),
]
