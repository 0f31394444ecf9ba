from django.urls import path

from apps.checkoffs import views

app_name = "checkoffs"
urlpatterns = [
    path("c/<slug:code>/checkoffs/", views.page, name="page"),
    path("c/<slug:code>/checkoffs/schedule/", views.schedule, name="schedule"),
    path("c/<slug:code>/checkoffs/outcomes/", views.outcomes, name="outcomes"),
]
