from django.urls import path

from apps.scribing import views

app_name = "scribing"
urlpatterns = [path("c/<slug:code>/scribing/", views.page, name="page")]
