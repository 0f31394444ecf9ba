from django.urls import path

from apps.core.api import views

app_name = "api"
urlpatterns = [
    path("auth/token/", views.TokenView.as_view(), name="token"),
    path("auth/tokens/", views.TokenListView.as_view(), name="tokens"),
    path("auth/tokens/<int:token_id>/", views.TokenRevokeView.as_view(), name="token-revoke"),
    path("me/", views.MeView.as_view(), name="me"),
    path("courses/", views.CourseListView.as_view(), name="course-list"),
]
