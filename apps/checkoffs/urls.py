from django.urls import path

from apps.checkoffs import views

app_name = "checkoffs"
C = "c/<slug:code>/checkoffs/"
urlpatterns = [
    path(C, views.page, name="page"),
    path(f"{C}slots/<int:slot_id>/book/", views.slot_book, name="slot-book"),
    path(f"{C}slots/<int:slot_id>/move/", views.slot_move, name="slot-move"),
    path(f"{C}slots/<int:slot_id>/cancel/", views.slot_cancel, name="slot-cancel"),
    path(f"{C}sets/create/", views.set_create, name="set-create"),
    path(f"{C}sets/<int:set_id>/publish/", views.set_publish, name="set-publish"),
    path(f"{C}sets/<int:set_id>/unpublish/", views.set_unpublish, name="set-unpublish"),
    path(f"{C}sets/<int:set_id>/slots/create/", views.slots_create, name="slots-create"),
    path(f"{C}sets/<int:set_id>/slot/create/", views.slot_create, name="slot-create"),
    path(f"{C}sets/<int:set_id>/remind/", views.set_remind, name="set-remind"),
    path(f"{C}slots/<int:slot_id>/delete/", views.slot_delete, name="slot-delete"),
    path(f"{C}schedule/", views.schedule, name="schedule"),
    path(f"{C}outcomes/", views.outcomes, name="outcomes"),
]
