from django.urls import path

from apps.contributions import views

app_name = "contributions"
urlpatterns = [path("c/<slug:code>/contributions/", views.page, name="page")]
