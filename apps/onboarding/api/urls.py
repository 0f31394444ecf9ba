from django.urls import path

from apps.onboarding.api import views as v

app_name = "onboarding-api"
P = "courses/<slug:code>/questionnaire/"
urlpatterns = [
    path(P, v.QuestionnaireView.as_view(), name="questionnaire"),
    path(P + "answers/", v.AnswersView.as_view(), name="answers"),
    path(P + "people/", v.PeopleView.as_view(), name="people"),
    path(P + "remind/", v.RemindView.as_view(), name="remind"),
    path(P + "decisions/", v.DecisionView.as_view(), name="decisions"),
    path(P + "suggestions/", v.SuggestionsView.as_view(), name="suggestions"),
    path(P + "suggestions/<int:suggestion_id>/accept/", v.AcceptView.as_view(), name="accept"),
]
