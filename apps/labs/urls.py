from django.urls import path

from apps.labs import views

app_name = "labs"
C = "c/<slug:code>/labs/"
S = C + "<slug:lab>/steps/<int:number>/"
urlpatterns = [
    path(C, views.labs_page, name="list"),
    path(C + "<slug:lab>/", views.lab_page, name="lab"),
    path(C + "<slug:lab>/context/", views.context_choose, name="context"),
    path(S + "lock/", views.step_lock, name="lock"),
    path(S + "run/", views.step_run, name="run"),
    path(S + "submit/", views.step_submit, name="submit"),
]
