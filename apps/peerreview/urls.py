from django.urls import path

from apps.peerreview import views

app_name = "peerreview"
urlpatterns = [path("c/<slug:code>/peer-review/", views.page, name="page")]
