from django.urls import path

from apps.contributions import views

app_name = "contributions"
C = "c/<slug:code>/contributions/"
urlpatterns = [
    path(C, views.page, name="page"),
    path(f"{C}check/", views.proposal_check, name="check"),
    path(f"{C}propose/", views.proposal_submit, name="propose"),
    path(f"{C}<int:proposal_id>/edit/", views.proposal_edit, name="edit"),
    path(f"{C}<int:proposal_id>/review/", views.proposal_review, name="review"),
]
