from django.urls import path

from apps.calendar import views

app_name = "calendar"
urlpatterns = [
    path("c/<slug:code>/schedule/", views.schedule, name="schedule"),
    path("c/<slug:code>/calendar/", views.calendar_page, name="calendar"),
    path("c/<slug:code>/calendar/feed/create/", views.feed_create, name="feed-create"),
    path("c/<slug:code>/calendar/feed/rotate/", views.feed_rotate, name="feed-rotate"),
    path("c/<slug:code>/calendar/feed/revoke/", views.feed_revoke, name="feed-revoke"),
    path("c/<slug:code>/calendar/reminders/", views.reminders_save, name="reminders"),
    path(
        "c/<slug:code>/calendar/lectures/<int:lecture_id>/edit/",
        views.lecture_edit,
        name="lecture-edit",
    ),
    path("feeds/<str:token>.ics", views.feed, name="feed"),
]
