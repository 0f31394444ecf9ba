from django.urls import path

from apps.groups import views

app_name = "groups"
urlpatterns = [
    path("c/<slug:code>/group/", views.my_group, name="mine"),
    path("c/<slug:code>/groups/", views.board, name="board"),
    path("c/<slug:code>/groups/action/", views.board_action, name="action"),
    path("c/<slug:code>/groups/export.csv", views.export, name="export"),
    path("c/<slug:code>/groups/<int:group_id>/dissolve/", views.dissolve, name="dissolve"),
]
