from django.urls import path

from apps.extensions import views

app_name = "extensions"
E = "c/<slug:code>/extensions/"
urlpatterns = [
    path(E, views.page, name="page"),
    path(E + "ask/", views.ask, name="ask"),
    path(E + "<int:request_id>/withdraw/", views.withdraw, name="withdraw"),
    path(E + "<int:request_id>/approve/", views.approve, name="approve"),
    path(E + "<int:request_id>/decline/", views.decline, name="decline"),
    path(E + "<int:request_id>/document/", views.document, name="document"),
]
