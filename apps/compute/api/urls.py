from django.urls import path

from apps.compute.api import agent_views, key_views, views

app_name = "compute-api"
P = "courses/<slug:code>/"
urlpatterns = [
    path("compute/agent/samples/", agent_views.AgentSampleView.as_view(), name="agent-samples"),
    path("me/ssh-keys/", key_views.SshKeysView.as_view(), name="ssh-keys"),
    path("me/ssh-keys/<int:key_id>/", key_views.SshKeyView.as_view(), name="ssh-key"),
    path(P + "nodes/", views.NodeListView.as_view(), name="nodes"),
    path(P + "nodes/<int:node_id>/", views.NodeDetailView.as_view(), name="node"),
    path(P + "static-ips/", views.StaticIPListView.as_view(), name="ips"),
    path(P + "allocations/", views.AllocationListView.as_view(), name="allocations"),
    path(P + "allocations/allocate-all/", views.AllocateAllView.as_view(), name="allocate-all"),
    path(
        P + "allocations/<int:allocation_id>/release/", views.ReleaseView.as_view(), name="release"
    ),
    path(P + "my-node/files/", views.MyNodeFilesView.as_view(), name="my-files"),
    path(P + "windows/", views.WindowListView.as_view(), name="windows"),
    path(
        P + "windows/<int:window_id>/approve/",
        views.WindowActionView.as_view(action_name="approve"),
        name="window-approve",
    ),
    path(
        P + "windows/<int:window_id>/decline/",
        views.WindowActionView.as_view(action_name="decline"),
        name="window-decline",
    ),
    path(
        P + "windows/<int:window_id>/cancel/",
        views.WindowActionView.as_view(action_name="cancel"),
        name="window-cancel",
    ),
    path(
        P + "windows/<int:window_id>/files/", views.WindowFilesView.as_view(), name="window-files"
    ),
    path(P + "runs/", views.RunRecordListView.as_view(), name="runs"),
    path(P + "incidents/", views.IncidentListView.as_view(), name="incidents"),
    path(
        P + "incidents/course-wide/",
        views.CourseWideIncidentListView.as_view(),
        name="incidents-course-wide",
    ),
    path(
        P + "incidents/<int:incident_id>/affects-us/",
        views.IncidentAffectsUsView.as_view(),
        name="incident-affects-us",
    ),
    path(
        P + "incidents/<int:incident_id>/status/",
        views.IncidentStatusView.as_view(),
        name="incident-status",
    ),
]
