from django.urls import path

from apps.calendar.api import views

app_name = "calendar-api"
urlpatterns = [
    path("courses/<slug:code>/", views.CourseDetailView.as_view(), name="course-detail"),
]
