from django.urls import path

from apps.roster import views

app_name = "roster"
urlpatterns = [
    path("c/<slug:code>/roster/", views.page, name="page"),
    path("c/<slug:code>/roster/export.csv", views.export, name="export"),
    path("c/<slug:code>/roster/unlock/<int:user_id>/", views.unlock, name="unlock"),
    path("c/<slug:code>/roster/imports/<int:import_id>/", views.preview, name="preview"),
]
