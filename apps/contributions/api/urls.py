from django.urls import path

from apps.contributions.api import views as v

app_name = "contributions-api"
P = "courses/<slug:code>/contributions/"
urlpatterns = [
    path(P, v.ProposalsView.as_view(), name="proposals"),
    path(P + "check/", v.CheckView.as_view(), name="check"),
    path(P + "credits/", v.CreditsView.as_view(), name="credits"),
    path(P + "<int:proposal_id>/", v.ProposalView.as_view(), name="proposal"),
    path(P + "<int:proposal_id>/review/", v.ReviewView.as_view(), name="review"),
]
