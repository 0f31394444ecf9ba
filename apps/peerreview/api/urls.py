from django.urls import path

from apps.peerreview.api import views as v

app_name = "peerreview-api"
P = "courses/<slug:code>/peer-review/"
urlpatterns = [
    path(P + "rounds/", v.RoundsView.as_view(), name="rounds"),
    path(P + "rounds/<int:round_id>/pairing/", v.PairingView.as_view(), name="pairing"),
    path(P + "rounds/<int:round_id>/assignments/", v.AssignmentsView.as_view(), name="assignments"),
    path(P + "drafts/", v.DraftsView.as_view(), name="drafts"),
    path(P + "reviews/", v.ReviewsView.as_view(), name="reviews"),
    path(P + "reviews/<int:pair_id>/", v.ReviewSaveView.as_view(), name="review"),
]
