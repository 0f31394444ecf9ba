from django.urls import path

from apps.integrity.api import views

app_name = "integrity-api"
P = "courses/<slug:code>/similarity/"
urlpatterns = [
    path(P, views.CheckListView.as_view(), name="checks"),
    path(P + "<int:check_id>/pairs/", views.PairListView.as_view(), name="pairs"),
    path(P + "<int:check_id>/pairs/<int:match_id>/", views.PairDetailView.as_view(), name="pair"),
]
