from django.urls import path

from apps.checkoffs.api import views as v

app_name = "checkoffs-api"
P = "courses/<slug:code>/checkoffs/"
urlpatterns = [
    path(P + "sets/", v.SetsView.as_view(), name="sets"),
    path(P + "sets/<int:set_id>/publish/", v.SetPublishView.as_view(), name="set-publish"),
    path(P + "sets/<int:set_id>/slots/", v.SlotsView.as_view(), name="slots"),
    path(P + "sets/<int:set_id>/unbooked/", v.UnbookedView.as_view(), name="unbooked"),
    path(P + "slots/<int:slot_id>/", v.SlotView.as_view(), name="slot"),
    path(P + "slots/<int:slot_id>/book/", v.BookView.as_view(), name="book"),
    path(P + "slots/<int:slot_id>/cancel/", v.CancelView.as_view(), name="cancel"),
    path(P + "bookings/", v.BookingsView.as_view(), name="bookings"),
    path(P + "bookings/<int:booking_id>/outcome/", v.OutcomeView.as_view(), name="outcome"),
]
