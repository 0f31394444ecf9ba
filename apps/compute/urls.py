from django.urls import path

from apps.compute import views

app_name = "compute"
C = "c/<slug:code>/"
W = f"{C}windows/<int:window_id>/"
urlpatterns = [
    path(f"{C}node/", views.my_node, name="mine"),
    path(f"{C}node/files/<slug:kind>/", views.my_node_file, name="my-file"),
    path(f"{W}files/<slug:kind>/", views.window_file, name="window-file"),
    path(f"{W}approve/", views.window_approve, name="window-approve"),
    path(f"{W}cancel/", views.window_cancel, name="window-cancel"),
    path(f"{W}decline/", views.window_decline, name="window-decline"),
    path(f"{C}compute/", views.board, name="board"),
    path(f"{C}compute/allocate-all/", views.allocate_all, name="allocate-all"),
    path(
        f"{C}compute/groups/<int:group_id>/allocate/",
        views.allocation_create,
        name="allocation-create",
    ),
    path(
        f"{C}compute/allocations/<int:allocation_id>/release/",
        views.allocation_release,
        name="allocation-release",
    ),
    path(f"{C}compute/nodes/<int:node_id>/status/", views.node_status, name="node-status"),
    path(f"{C}incidents/", views.incidents, name="incidents"),
    path(f"{C}incidents/<int:incident_id>/", views.incident_action, name="incident-action"),
]
