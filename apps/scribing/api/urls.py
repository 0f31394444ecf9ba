from django.urls import path

from apps.scribing.api import views as v

app_name = "scribing-api"
P = "courses/<slug:code>/scribing/"
urlpatterns = [
    path(P + "lectures/", v.LecturesView.as_view(), name="lectures"),
    path(P + "preferences/", v.PreferencesView.as_view(), name="preferences"),
    path(P + "solve/", v.SolveView.as_view(), name="solve"),
    path(P + "publish/", v.PublishView.as_view(), name="publish"),
    path(P + "duties/", v.DutiesView.as_view(), name="duties"),
    path(P + "duties/<int:duty_id>/submit/", v.SubmitView.as_view(), name="submit"),
    path(P + "duties/<int:duty_id>/review/", v.ReviewView.as_view(), name="review"),
    path(P + "swaps/", v.SwapsView.as_view(), name="swaps"),
    path(P + "swaps/<int:swap_id>/decide/", v.SwapDecideView.as_view(), name="swap-decide"),
]
