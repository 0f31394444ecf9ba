from django.apps import AppConfig


class AutograderConfig(AppConfig):
    name = "apps.autograder"
    label = "autograder"
    verbose_name = "Autograder"
