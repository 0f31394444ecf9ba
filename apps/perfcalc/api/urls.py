from django.urls import path

from apps.perfcalc.api import views

app_name = "perfcalc-api"
urlpatterns = [
    path("perfcalc/", views.FormulaIndexView.as_view(), name="index"),
    path("perfcalc/hardware/", views.HardwareView.as_view(), name="hardware"),
    path("perfcalc/models/", views.ModelsView.as_view(), name="models"),
    path("perfcalc/plan/", views.PlanView.as_view(), name="plan"),
    path("perfcalc/batch/", views.BatchView.as_view(), name="batch"),
    path("perfcalc/vector/", views.VectorView.as_view(), name="vector"),
    *(path(f"perfcalc/{name}/", view, name=name) for name, view in views.formula_views()),
]
