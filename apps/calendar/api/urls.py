from django.urls import path

from apps.calendar.api import views, views_events

app_name = "calendar-api"
urlpatterns = [
    path("courses/<slug:code>/", views.CourseDetailView.as_view(), name="course-detail"),
    path("courses/<slug:code>/calendar/", views_events.CalendarView.as_view(), name="calendar"),
    path("courses/<slug:code>/calendar/feed/", views_events.FeedView.as_view(), name="feed"),
    path(
        "courses/<slug:code>/calendar/feed/rotate/",
        views_events.FeedRotateView.as_view(),
        name="feed-rotate",
    ),
    path(
        "courses/<slug:code>/calendar/lectures/<int:lecture_id>/",
        views_events.LectureEditView.as_view(),
        name="lecture-edit",
    ),
]
