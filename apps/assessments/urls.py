from django.urls import path

from apps.assessments import views

app_name = "assessments"
urlpatterns = [
    path("c/<slug:code>/assessments/", views.index, name="list"),
    path("c/<slug:code>/assessments/<int:assessment_id>/", views.detail, name="detail"),
    path("c/<slug:code>/assessments/<int:assessment_id>/take/", views.take, name="take"),
]
