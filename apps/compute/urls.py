from django.urls import path

from apps.compute.board import views, views_keys, views_runs
from apps.compute.cloud import views as views_cloud
from apps.compute.cloud import views_preflight
from apps.compute.usage import views as views_usage
from apps.compute.usage import views_budget

# One URL conf for the three floors of compute (board, cloud, usage): the names stay `compute:*`.

app_name = "compute"
C = "c/<slug:code>/"
W = f"{C}windows/<int:window_id>/"
urlpatterns = [
    path("accounts/ssh-keys/", views_keys.keys_page, name="ssh-keys"),
    path("accounts/ssh-keys/add/", views_keys.key_add, name="ssh-key-add"),
    path("accounts/ssh-keys/<int:key_id>/remove/", views_keys.key_remove, name="ssh-key-remove"),
    path(f"{C}node/", views.my_node, name="mine"),
    path(f"{C}node/files/<slug:kind>/", views.my_node_file, name="my-file"),
    path(f"{C}node/move/", views.node_move_request, name="node-move"),
    path(
        f"{C}compute/moves/<int:move_id>/approve/",
        views.node_move_approve,
        name="node-move-approve",
    ),
    path(
        f"{C}compute/moves/<int:move_id>/decline/",
        views.node_move_decline,
        name="node-move-decline",
    ),
    path(f"{W}files/<slug:kind>/", views.window_file, name="window-file"),
    path(f"{W}approve/", views.window_approve, name="window-approve"),
    path(f"{W}cancel/", views.window_cancel, name="window-cancel"),
    path(f"{W}decline/", views.window_decline, name="window-decline"),
    path(f"{C}compute/", views.board, name="board"),
    path(f"{C}compute/allocate-all/", views.allocate_all, name="allocate-all"),
    path(f"{C}compute/formation/", views.formation_run, name="formation-run"),
    path(
        f"{C}compute/groups/<int:group_id>/allocate/",
        views.allocation_create,
        name="allocation-create",
    ),
    path(
        f"{C}compute/allocations/<int:allocation_id>/release/",
        views.allocation_release,
        name="allocation-release",
    ),
    path(f"{C}compute/nodes/<int:node_id>/status/", views.node_status, name="node-status"),
    path(f"{C}compute/cloud/", views_cloud.cloud_page, name="cloud"),
    path(f"{C}compute/cloud/check/", views_cloud.cloud_reconcile, name="cloud-reconcile"),
    path(f"{C}compute/cloud/jobs/<int:op_id>/", views_cloud.cloud_job, name="cloud-job"),
    path(
        f"{C}compute/cloud/jobs/<int:op_id>/retry/",
        views_cloud.cloud_job_retry,
        name="cloud-job-retry",
    ),
    path(f"{C}compute/cloud/sync/", views_cloud.cloud_sync, name="cloud-sync"),
    path(f"{C}compute/cloud/sync/apply/", views_cloud.cloud_sync_apply, name="cloud-sync-apply"),
    path(f"{C}compute/cloud/preflight/", views_preflight.preflight_page, name="cloud-preflight"),
    path(f"{C}compute/budget/", views_budget.budget_page, name="budget"),
    path(f"{C}compute/budget/export.csv", views_budget.budget_export, name="budget-export"),
    path(f"{C}compute/agent.py", views_budget.agent_file, name="agent-file"),
    path(
        f"{C}compute/nodes/<int:node_id>/power/",
        views_cloud.node_power_confirm,
        name="node-power-confirm",
    ),
    path(f"{C}compute/nodes/<int:node_id>/start/", views_cloud.node_start, name="node-start"),
    path(f"{C}compute/nodes/<int:node_id>/stop/", views_cloud.node_stop, name="node-stop"),
    path(f"{C}compute/nodes/<int:node_id>/agent/", views_budget.agent_page, name="agent"),
    path(
        f"{C}compute/nodes/<int:node_id>/agent/token/",
        views_budget.agent_token,
        name="agent-token",
    ),
    # Quotas and schedules per group (apps.compute.usage.views).
    path(f"{C}node/usage/", views_usage.my_usage, name="my-usage"),
    path(f"{C}compute/usage/", views_usage.usage_page, name="usage"),
    path(f"{C}compute/usage/quota/", views_usage.group_quota, name="group-quota"),
    path(
        f"{C}compute/opt-outs/<int:opt_out_id>/approve/",
        views_usage.opt_out_approve,
        name="opt-out-approve",
    ),
    path(
        f"{C}compute/opt-outs/<int:opt_out_id>/decline/",
        views_usage.opt_out_decline,
        name="opt-out-decline",
    ),
    path(f"{C}runs/", views_runs.run_list, name="runs"),
    path(f"{C}runs/export.csv", views_runs.run_export, name="runs-export"),
    path(f"{C}incidents/", views.incidents, name="incidents"),
    path(f"{C}incidents/<int:incident_id>/", views.incident_action, name="incident-action"),
    path(
        f"{C}incidents/<int:incident_id>/affects-us/",
        views.incident_affects_us,
        name="incident-affects-us",
    ),
]
