from django.urls import path

from apps.integrity import views

app_name = "integrity"
CHECKS = "c/<slug:code>/integrity/"
ONE = f"{CHECKS}<int:check_id>/"
urlpatterns = [
    path(CHECKS, views.checks, name="checks"),
    path(f"{CHECKS}upload/", views.upload, name="upload"),
    path(ONE, views.check_detail, name="check"),
    path(f"{ONE}export.csv", views.export, name="export"),
    path(f"{ONE}pairs/<int:match_id>/", views.pair_detail, name="pair"),
]
