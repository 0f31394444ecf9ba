from django.urls import path

from apps.impact import views

app_name = "impact"
urlpatterns = [path("c/<slug:code>/impact/", views.page, name="page")]
