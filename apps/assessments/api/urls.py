from django.urls import path

from apps.assessments.api import views as v

app_name = "assessments-api"
P = "courses/<slug:code>/assessments/"
urlpatterns = [
    path(P, v.AssessmentsView.as_view(), name="list"),
    path(P + "<int:assessment_id>/imports/", v.ImportsView.as_view(), name="imports"),
    path(P + "<int:assessment_id>/imports/<int:batch_id>/", v.ImportView.as_view(), name="import"),
    path(
        P + "<int:assessment_id>/imports/<int:batch_id>/commit/",
        v.ImportCommitView.as_view(),
        name="import-commit",
    ),
    path(P + "<int:assessment_id>/report/", v.ReportView.as_view(), name="report"),
    path(P + "<int:assessment_id>/export/", v.ExportView.as_view(), name="export"),
    path(P + "<int:assessment_id>/mine/", v.MineView.as_view(), name="mine"),
    path(P + "<int:assessment_id>/publish/", v.PublishView.as_view(), name="publish"),
    path(P + "<int:assessment_id>/identities/", v.IdentitiesView.as_view(), name="identities"),
]
