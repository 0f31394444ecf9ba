from django.urls import path

from apps.groups.api import views

app_name = "groups-api"
urlpatterns = [
    path("courses/<slug:code>/groups/", views.GroupListView.as_view(), name="list"),
    path("courses/<slug:code>/groups/join/", views.JoinView.as_view(), name="join"),
    path("courses/<slug:code>/groups/leave/", views.LeaveView.as_view(), name="leave"),
    path("courses/<slug:code>/groups/ungrouped/", views.UngroupedView.as_view(), name="ungrouped"),
    path(
        "courses/<slug:code>/groups/<int:group_id>/", views.GroupDetailView.as_view(), name="detail"
    ),
    path(
        "courses/<slug:code>/groups/<int:group_id>/members/",
        views.MembersView.as_view(),
        name="members",
    ),
    path(
        "courses/<slug:code>/groups/<int:group_id>/members/<int:user_id>/",
        views.MemberView.as_view(),
        name="member",
    ),
    path(
        "courses/<slug:code>/groups/<int:group_id>/merge/", views.MergeView.as_view(), name="merge"
    ),
]
