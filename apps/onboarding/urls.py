from django.urls import path

from apps.onboarding import views

app_name = "onboarding"
urlpatterns = [
    path("c/<slug:code>/questionnaire/", views.page, name="page"),
    path("c/<slug:code>/questionnaire/people/", views.people, name="people"),
    path("c/<slug:code>/questionnaire/suggestions/", views.suggestions, name="suggestions"),
]
