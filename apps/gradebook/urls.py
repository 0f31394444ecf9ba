from django.urls import path

from apps.gradebook import views

app_name = "gradebook"
urlpatterns = [
    path("c/<slug:code>/gradebook/", views.page, name="page"),
    path("c/<slug:code>/gradebook/students/<int:user_id>/", views.student_detail, name="student"),
    path("c/<slug:code>/gradebook/components/", views.components, name="components"),
    path(
        "c/<slug:code>/gradebook/components/save/",
        views.components_save,
        name="components-save",
    ),
    path("c/<slug:code>/gradebook/freeze/", views.grades_freeze, name="freeze"),
    path("c/<slug:code>/gradebook/unfreeze/", views.grades_unfreeze, name="unfreeze"),
    path("c/<slug:code>/gradebook/import/", views.import_page, name="import"),
    path(
        "c/<slug:code>/gradebook/imports/<int:import_id>/",
        views.import_preview,
        name="import-preview",
    ),
    path("c/<slug:code>/gradebook/export.csv", views.export, name="export"),
]
