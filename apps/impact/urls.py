from django.urls import path

from apps.impact import views

app_name = "impact"
IMPACT = "c/<slug:code>/impact/"
urlpatterns = [
    path(IMPACT, views.page, name="page"),
    path(f"{IMPACT}items/add/", views.item_add, name="item-add"),
    path(f"{IMPACT}items/<int:item_id>/remove/", views.item_remove, name="item-remove"),
    path(f"{IMPACT}items/<int:item_id>/score/", views.item_score, name="item-score"),
    path(f"{IMPACT}groups/<int:group_id>/score/", views.group_score, name="group-score"),
]
