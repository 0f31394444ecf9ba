from django.urls import path

from apps.slackdays import edit_views, stack_views, views

app_name = "slackdays"
S = "c/<slug:code>/slack/"
urlpatterns = [
    path(S, views.mine, name="mine"),
    path(f"{S}apply/", views.slack_apply, name="apply"),
    path(f"{S}cancel/", views.slack_cancel, name="cancel"),
    path(f"{S}staff/", views.staff, name="staff"),
    path(f"{S}staff/exceptions/grant/", views.exception_grant, name="exception-grant"),
    path(
        f"{S}staff/exceptions/<int:exception_id>/revoke/",
        views.exception_revoke,
        name="exception-revoke",
    ),
    path(f"{S}staff/refund/", views.slack_refund, name="refund"),
    path(f"{S}staff/adjust/", views.slack_adjust, name="adjust"),
    path(f"{S}staff/late/<int:late_id>/decide/", views.late_work_decide, name="late-decide"),
    path(f"{S}deadlines/<int:assignment_id>/", stack_views.deadline, name="deadline"),
    path(f"{S}import/", views.lateness_import, name="import"),
    path(f"{S}import/<int:import_id>/", views.lateness_import, name="import-preview"),
    path(
        "c/<slug:code>/calendar/assignments/<int:assignment_id>/edit/",
        edit_views.assignment_edit,
        name="assignment-edit",
    ),
]
