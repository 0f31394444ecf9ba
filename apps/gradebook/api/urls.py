from django.urls import path

from apps.gradebook.api import views as v

app_name = "gradebook-api"
P = "courses/<slug:code>/gradebook/"
urlpatterns = [
    path(P + "components/", v.ComponentsView.as_view(), name="components"),
    path(P + "scores/", v.ScoresView.as_view(), name="scores"),
    path(P + "imports/", v.ImportsView.as_view(), name="imports"),
    path(P + "imports/<int:import_id>/", v.ImportView.as_view(), name="import"),
    path(P + "imports/<int:import_id>/commit/", v.ImportCommitView.as_view(), name="import-commit"),
    path(P + "students/", v.StudentsView.as_view(), name="students"),
    path(P + "me/", v.MeView.as_view(), name="me"),
    path(P + "export/", v.ExportView.as_view(), name="export"),
    path(P + "freeze/", v.FreezeView.as_view(), name="freeze"),
]
