from django.apps import AppConfig


class SsoConfig(AppConfig):
    name = "apps.sso"
    verbose_name = "Campus sign-on"
