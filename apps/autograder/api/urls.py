from django.urls import path

from apps.autograder.api import practice_views, regrade_views, views, written_views

app_name = "autograder-api"
P = "courses/<slug:code>/"
urlpatterns = [
    path(P + "question-sets/", views.SetListView.as_view(), name="sets"),
    path(P + "question-sets/<slug:key>/mine/", views.MineView.as_view(), name="mine"),
    path(P + "question-sets/<slug:key>/answers/", views.AnswerView.as_view(), name="answers"),
    path(P + "question-sets/<slug:key>/uploads/", views.UploadView.as_view(), name="upload"),
    path(
        P + "question-sets/<slug:key>/uploads/<int:upload_id>/",
        views.UploadDetailView.as_view(),
        name="upload-detail",
    ),
    path(
        P + "question-sets/<slug:key>/uploads/<int:upload_id>/commit/",
        views.UploadCommitView.as_view(),
        name="upload-commit",
    ),
    path(P + "question-sets/<slug:key>/runs/", views.RunsView.as_view(), name="runs"),
    path(
        P + "question-sets/<slug:key>/practice/<slug:qkey>/check/",
        practice_views.PracticeCheckView.as_view(),
        name="practice-check",
    ),
    path(
        P + "question-sets/<slug:key>/practice/<slug:qkey>/variant/",
        practice_views.PracticeVariantView.as_view(),
        name="practice-variant",
    ),
    path(P + "question-sets/<slug:key>/release/", views.ReleaseView.as_view(), name="release"),
    path(P + "grading-runs/<int:run_id>/", views.RunView.as_view(), name="run"),
    path(
        P + "question-sets/<slug:key>/written/<slug:qkey>/",
        written_views.WrittenView.as_view(),
        name="written",
    ),
    path(
        P + "question-sets/<slug:key>/written/",
        written_views.GradingView.as_view(),
        name="written-grading",
    ),
    path(
        P + "question-sets/<slug:key>/names-hidden/",
        written_views.NamesHiddenView.as_view(),
        name="names-hidden",
    ),
    path(
        P + "question-sets/<slug:key>/written/<slug:qkey>/grader/",
        written_views.GraderView.as_view(),
        name="written-grader",
    ),
    path(
        P + "question-sets/<slug:key>/written/<slug:qkey>/split/",
        written_views.SplitView.as_view(),
        name="written-split",
    ),
    path(
        P + "question-sets/<slug:key>/practice/<slug:qkey>/solution/",
        practice_views.PracticeSolutionView.as_view(),
        name="practice-solution",
    ),
    path(
        P + "question-sets/<slug:key>/written/<slug:qkey>/marks/",
        written_views.MarksView.as_view(),
        name="written-marks",
    ),
    path(
        P + "question-sets/<slug:key>/regrades/",
        regrade_views.AskView.as_view(),
        name="regrade-ask",
    ),
    path(P + "regrades/", regrade_views.ListView.as_view(), name="regrades"),
    path(
        P + "regrades/<int:request_id>/decide/",
        regrade_views.DecideView.as_view(),
        name="regrade-decide",
    ),
    path(P + "grading-runs/<int:run_id>/totals/", views.RunTotalsView.as_view(), name="run-totals"),
]
