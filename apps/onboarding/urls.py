from django.urls import path

from apps.onboarding import views

app_name = "onboarding"
Q = "c/<slug:code>/questionnaire/"
urlpatterns = [
    path(Q, views.page, name="page"),
    path(f"{Q}create/", views.questionnaire_create, name="create"),
    path(f"{Q}window/", views.questionnaire_window, name="window"),
    path(f"{Q}questions/add/", views.question_add, name="question-add"),
    path(f"{Q}questions/<int:question_id>/remove/", views.question_remove, name="question-remove"),
    path(f"{Q}people/", views.people, name="people"),
    path(f"{Q}people/remind/", views.people_remind, name="remind"),
    path(f"{Q}people/<int:user_id>/decision/", views.decision_set, name="decision"),
    path(f"{Q}suggestions/", views.suggestions, name="suggestions"),
    path(f"{Q}suggestions/make/", views.suggestion_make, name="suggestion-make"),
    path(
        f"{Q}suggestions/<int:suggestion_id>/move/",
        views.suggestion_move,
        name="suggestion-move",
    ),
    path(
        f"{Q}suggestions/<int:suggestion_id>/accept/",
        views.suggestion_accept,
        name="suggestion-accept",
    ),
]
