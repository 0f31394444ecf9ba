from django.urls import path

from apps.calendar import views

app_name = "calendar"
urlpatterns = [path("c/<slug:code>/schedule/", views.schedule, name="schedule")]
