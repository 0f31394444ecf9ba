from django.urls import path

from apps.assessments import views

app_name = "assessments"
A = "c/<slug:code>/assessments/"
ONE = f"{A}<int:assessment_id>/"
urlpatterns = [
    path(A, views.index, name="list"),
    path(f"{A}extended-time/", views.extended_time, name="extended-time"),
    path(ONE, views.detail, name="detail"),
    path(f"{ONE}window/", views.window_set, name="window"),
    path(f"{ONE}imports/", views.import_preview, name="import"),
    path(f"{ONE}imports/<int:batch_id>/commit/", views.import_commit, name="import-commit"),
    path(f"{ONE}publish/", views.report_publish, name="publish"),
    path(f"{ONE}unpublish/", views.report_unpublish, name="unpublish"),
    path(f"{ONE}id-map/destroy/", views.identities_destroy, name="destroy-map"),
    path(f"{ONE}take/", views.take, name="take"),
    path(f"{ONE}demographics/", views.demographics, name="demographics"),
    path(f"{ONE}take/start/", views.take_start, name="take-start"),
    path(f"{ONE}take/submit/", views.take_submit, name="take-submit"),
]
