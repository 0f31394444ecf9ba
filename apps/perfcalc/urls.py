from django.urls import path

from apps.perfcalc import views

app_name = "perfcalc"
urlpatterns = [
    path("calc/", views.index, name="index"),
    path("calc/compare/", views.compare, name="compare"),
    path("calc/hardware/", views.hardware, name="hardware"),
    path("calc/plan/", views.plan_page, name="plan"),
    path("calc/<slug:name>/", views.formula_page, name="formula"),
]
