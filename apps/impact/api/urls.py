from django.urls import path

from apps.impact.api import views as v

app_name = "impact-api"
P = "courses/<slug:code>/impact/"
urlpatterns = [
    path(P + "items/", v.ItemsView.as_view(), name="items"),
    path(P + "items/<int:item_id>/", v.ItemView.as_view(), name="item"),
    path(P + "items/<int:item_id>/score/", v.ItemScoreView.as_view(), name="item-score"),
    path(P + "groups/", v.GroupsView.as_view(), name="groups"),
    path(P + "groups/<int:group_id>/score/", v.GroupScoreView.as_view(), name="group-score"),
]
