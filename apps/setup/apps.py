from django.apps import AppConfig


class SetupConfig(AppConfig):
    """Above every app: loads a course file and the demo people into all of them. Nothing
    imports it but its commands and the tests; it imports whatever it needs from below."""

    name = "apps.setup"
    label = "setup"
    verbose_name = "Setup: course files and the demo"
