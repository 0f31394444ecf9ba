from django.urls import path

from apps.labs.api import views as v

app_name = "labs-api"
P = "courses/<slug:code>/labs/"
S = P + "<slug:lab>/steps/<int:number>/"
urlpatterns = [
    path(P, v.LabsView.as_view(), name="labs"),
    path(P + "<slug:lab>/", v.LabView.as_view(), name="lab"),
    path(S + "lock/", v.LockView.as_view(), name="lock"),
    path(S + "instrument/", v.InstrumentView.as_view(), name="instrument"),
    path(S + "submit/", v.SubmitView.as_view(), name="submit"),
]
