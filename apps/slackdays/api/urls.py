from django.urls import path

from apps.slackdays.api import edit_views, stack_views, views

app_name = "slack-api"
P = "courses/<slug:code>/slack/"
urlpatterns = [
    path(P + "me/", views.MySlackView.as_view(), name="me"),
    path(P + "apply/", views.ApplyView.as_view(), name="apply"),
    path(P + "cancel/", views.CancelView.as_view(), name="cancel"),
    path(P + "balances/", views.BalancesView.as_view(), name="balances"),
    path(P + "ledger/", views.LedgerView.as_view(), name="ledger"),
    path(P + "refund/", views.RefundView.as_view(), name="refund"),
    path(P + "adjust/", views.AdjustView.as_view(), name="adjust"),
    path(P + "exceptions/", views.ExceptionsView.as_view(), name="exceptions"),
    path(
        P + "deadlines/<int:assignment_id>/",
        stack_views.DeadlineStacksView.as_view(),
        name="deadline",
    ),
    path(P + "lateness/", views.LatenessImportView.as_view(), name="lateness"),
    path(
        P + "lateness/<int:import_id>/commit/",
        views.LatenessCommitView.as_view(),
        name="lateness-commit",
    ),
    path(
        "courses/<slug:code>/calendar/assignments/<int:assignment_id>/",
        edit_views.AssignmentEditView.as_view(),
        name="assignment-edit",
    ),
    path(
        "courses/<slug:code>/calendar/assignments/<int:assignment_id>/impact/",
        edit_views.AssignmentImpactView.as_view(),
        name="assignment-impact",
    ),
]
