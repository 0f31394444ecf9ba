from django.urls import path

from apps.milestones.api import views

app_name = "milestones-api"
P = "courses/<slug:code>/"
urlpatterns = [
    path(P + "milestones/", views.MilestoneBoardView.as_view(), name="board"),
    path(P + "milestones/<int:milestone_id>/submit/", views.SubmitView.as_view(), name="submit"),
    path(
        P + "milestones/<int:milestone_id>/extension/",
        views.ExtensionView.as_view(),
        name="extension",
    ),
    path(P + "milestones/<int:milestone_id>/excuse/", views.ExcuseView.as_view(), name="excuse"),
    path(
        P + "calendar/milestones/<int:milestone_id>/",
        views.MilestoneEditView.as_view(),
        name="edit",
    ),
    path(
        P + "calendar/milestones/<int:milestone_id>/impact/",
        views.MilestoneImpactView.as_view(),
        name="impact",
    ),
]
