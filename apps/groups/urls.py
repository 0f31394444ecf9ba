from django.urls import path

from apps.groups import views

app_name = "groups"
C = "c/<slug:code>/"
urlpatterns = [
    path(f"{C}group/", views.my_group, name="mine"),
    path(f"{C}group/create/", views.group_create, name="create"),
    path(f"{C}group/join/", views.group_join, name="join"),
    path(f"{C}group/leave/", views.group_leave, name="leave"),
    path(f"{C}group/rename/", views.group_rename, name="rename"),
    path(f"{C}groups/", views.board, name="board"),
    path(f"{C}groups/create/", views.board_create, name="board-create"),
    path(f"{C}groups/move/", views.member_move, name="move"),
    path(f"{C}groups/merge/", views.group_merge, name="merge"),
    path(f"{C}groups/members/<int:user_id>/remove/", views.member_remove, name="remove"),
    path(f"{C}groups/export.csv", views.export, name="export"),
    path(f"{C}groups/<int:group_id>/dissolve/", views.dissolve, name="dissolve"),
]
