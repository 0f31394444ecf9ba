from django.urls import path

from apps.compute import views

app_name = "compute"
urlpatterns = [
    path("c/<slug:code>/node/", views.my_node, name="mine"),
    path("c/<slug:code>/node/files/<slug:kind>/", views.my_node_file, name="my-file"),
    path(
        "c/<slug:code>/windows/<int:window_id>/files/<slug:kind>/",
        views.window_file,
        name="window-file",
    ),
    path(
        "c/<slug:code>/windows/<int:window_id>/<slug:action>/",
        views.window_action,
        name="window-action",
    ),
    path("c/<slug:code>/compute/", views.board, name="board"),
    path("c/<slug:code>/compute/action/", views.board_action, name="action"),
    path("c/<slug:code>/incidents/", views.incidents, name="incidents"),
    path(
        "c/<slug:code>/incidents/<int:incident_id>/", views.incident_action, name="incident-action"
    ),
]
