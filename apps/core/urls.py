from django.urls import path

from apps.core import views

app_name = "core"
urlpatterns = [
    path("", views.home, name="home"),
    path("c/<slug:code>/", views.dashboard, name="dashboard"),
    path("c/<slug:code>/check/", views.course_check, name="check"),
    path("c/<slug:code>/jobs/", views.course_jobs, name="jobs"),
    path("c/<slug:code>/help/", views.course_help, name="help"),
]
