from django.urls import path

from apps.extensions.api import views as v

app_name = "extensions-api"
P = "courses/<slug:code>/extensions/"
urlpatterns = [
    path(P, v.RequestsView.as_view(), name="requests"),
    path(P + "<int:request_id>/decide/", v.DecideView.as_view(), name="decide"),
    path(P + "<int:request_id>/withdraw/", v.WithdrawView.as_view(), name="withdraw"),
]
