from django.urls import path

from apps.core.api import views

app_name = "api"
urlpatterns = [
    path("auth/token/", views.TokenView.as_view(), name="token"),
    path("me/", views.MeView.as_view(), name="me"),
    path("courses/", views.CourseListView.as_view(), name="course-list"),
]
