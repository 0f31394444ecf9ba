from django.apps import AppConfig


class LtiConfig(AppConfig):
    name = "apps.lti"
    verbose_name = "LMS (LTI 1.3)"
