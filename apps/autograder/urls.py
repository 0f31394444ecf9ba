from django.urls import path

from apps.autograder import views, views_fair, views_regrades, views_written

app_name = "autograder"
urlpatterns = [
    path("c/<slug:code>/questions/", views.sets, name="sets"),
    # before <slug:key>: "regrades" is not a set
    path("c/<slug:code>/regrades/", views_regrades.queue_page, name="regrades"),
    path(
        "c/<slug:code>/regrades/<int:request_id>/rescore/",
        views_regrades.regrade_rescore,
        name="regrade-rescore",
    ),
    path(
        "c/<slug:code>/regrades/<int:request_id>/decline/",
        views_regrades.regrade_decline,
        name="regrade-decline",
    ),
    path(
        "c/<slug:code>/questions/<slug:key>/regrade/",
        views_regrades.regrade_ask,
        name="regrade-ask",
    ),
    path("c/<slug:code>/questions/<slug:key>/", views.set_page, name="set"),
    path(
        "c/<slug:code>/questions/<slug:key>/written/<slug:qkey>/",
        views_written.written_page,
        name="written",
    ),
    path(
        "c/<slug:code>/questions/<slug:key>/written/<slug:qkey>/grader/",
        views.grader_set,
        name="written-grader",
    ),
    path("c/<slug:code>/questions/<slug:key>/hide-names/", views.names_toggle, name="hide-names"),
    path(
        "c/<slug:code>/questions/<slug:key>/written/<slug:qkey>/split/",
        views_fair.written_split,
        name="written-split",
    ),
    path(
        "c/<slug:code>/questions/<slug:key>/practice/<slug:qkey>/solution/",
        views_fair.practice_solution,
        name="practice-solution",
    ),
    path(
        "c/<slug:code>/questions/<slug:key>/practice/<slug:qkey>/check/",
        views.practice_check,
        name="practice-check",
    ),
    path(
        "c/<slug:code>/questions/<slug:key>/practice/<slug:qkey>/variant/",
        views.practice_variant,
        name="practice-variant",
    ),
    path(
        "c/<slug:code>/questions/<slug:key>/written/<slug:qkey>/marks/",
        views_written.marks_apply,
        name="written-marks",
    ),
    path(
        "c/<slug:code>/questions/<slug:key>/written/<slug:qkey>/items/",
        views_written.item_add,
        name="written-item-add",
    ),
    path(
        "c/<slug:code>/questions/<slug:key>/written/<slug:qkey>/items/<int:item_id>/",
        views_written.item_edit,
        name="written-item-edit",
    ),
    path("c/<slug:code>/questions/<slug:key>/answers/", views.answers_save, name="answers"),
    path("c/<slug:code>/questions/<slug:key>/uploads/", views.upload_create, name="upload"),
    path(
        "c/<slug:code>/questions/<slug:key>/uploads/<int:upload_id>/commit/",
        views.upload_commit,
        name="upload-commit",
    ),
    path("c/<slug:code>/questions/<slug:key>/grade/", views.grade, name="grade"),
    path("c/<slug:code>/questions/<slug:key>/release/", views.results_release, name="release"),
    path("c/<slug:code>/questions/<slug:key>/hide/", views.results_hide, name="hide"),
    path("c/<slug:code>/grading/runs/<int:run_id>/progress/", views.run_progress, name="progress"),
    path(
        "c/<slug:code>/questions/<slug:key>/uploads/<int:upload_id>/progress/",
        views.upload_progress,
        name="upload-progress",
    ),
    path("c/<slug:code>/grading/runs/<int:run_id>/", views.run_results, name="results"),
]
