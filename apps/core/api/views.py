from __future__ import annotations

from django.conf import settings
from django.db.models import OuterRef, QuerySet, Subquery
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle
from rest_framework.views import APIView

from apps.core.api.exceptions import ErrorSerializer
from apps.core.api.serializers import (
    ApiTokenSerializer,
    CourseListSerializer,
    MeSerializer,
    TokenRequestSerializer,
    TokenSerializer,
)
from apps.core.models import ApiToken, Course, Membership, User
from apps.core.selectors import course_list
from apps.core.tokens import token_create, token_revoke, tokens_of

ERRORS = {
    401: OpenApiResponse(ErrorSerializer, description="Not logged in."),
    403: OpenApiResponse(ErrorSerializer, description="Logged in but not allowed."),
}
ERR_404 = OpenApiResponse(ErrorSerializer, description="No such token of yours.")


class LoginThrottle(AnonRateThrottle):
    """A coarse flood guard only: a lecture hall shares one campus NAT, so it must let a whole
    class log in at once. Wrong passwords are limited per account by django-axes."""

    rate = "600/min"


class TokenView(APIView):
    """Exchange email + password for a new API token for this client (each client its own);
    DELETE revokes the token the call is made with, and no other."""

    permission_classes = (AllowAny,)
    throttle_classes = (LoginThrottle,)

    @extend_schema(
        request=TokenRequestSerializer,
        responses={
            200: TokenSerializer,
            400: OpenApiResponse(description="Wrong email or password."),
            403: OpenApiResponse(description="Password log-in is turned off (PASSWORD_LOGIN=off)."),
        },
        auth=[],
    )
    def post(self, request: Request) -> Response:
        if not getattr(settings, "PASSWORD_LOGIN", True):
            return Response(
                {
                    "detail": "Password log-in is turned off here: sign on with your campus "
                    "account and create a token on /accounts/tokens/.",
                    "code": "password_login_off",
                },
                status=status.HTTP_403_FORBIDDEN,
            )
        serializer = TokenRequestSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        name = data.get("client") or request.headers.get("User-Agent") or ""
        token, key = token_create(user=serializer.validated_data["user"], name=name)
        return Response({"token": key, "id": token.pk, "name": token.name})

    @extend_schema(request=None, responses={204: None, **ERRORS})
    def delete(self, request: Request) -> Response:
        if not request.user.is_authenticated:
            return Response(
                {"detail": "Not logged in.", "code": "not_authenticated"},
                status=status.HTTP_401_UNAUTHORIZED,
            )
        if isinstance(request.auth, ApiToken):
            token_revoke(user=request.auth.user, token_id=request.auth.pk)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenListView(APIView):
    """Your API tokens: name, when made, when last used, revoked or not (never the key)."""

    @extend_schema(responses={200: ApiTokenSerializer(many=True), **ERRORS})
    def get(self, request: Request) -> Response:
        return Response(ApiTokenSerializer(tokens_of(request.user), many=True).data)  # type: ignore[arg-type]


class TokenRevokeView(APIView):
    """Revoke one of your tokens; your other clients keep working."""

    @extend_schema(request=None, responses={204: None, 404: ERR_404, **ERRORS})
    def delete(self, request: Request, token_id: int) -> Response:
        token_revoke(user=request.user, token_id=token_id)  # type: ignore[arg-type]
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeView(generics.RetrieveAPIView):
    """Your own profile with your role in each course."""

    serializer_class = MeSerializer

    @extend_schema(responses={200: MeSerializer, **ERRORS})
    def get(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().get(request, *args, **kwargs)

    def get_object(self) -> User:
        return self.request.user  # type: ignore[return-value]


def with_role(qs: QuerySet[Course], user: User) -> QuerySet[Course]:
    role = Membership.objects.filter(course=OuterRef("pk"), user=user, is_active=True).values(
        "role"
    )
    return qs.annotate(role=Subquery(role[:1]))


class CourseListView(generics.ListAPIView):
    """Courses you belong to, with your role in each."""

    serializer_class = CourseListSerializer
    filterset_fields = ("term",)

    def get_queryset(self) -> QuerySet[Course]:
        if getattr(self, "swagger_fake_view", False):  # schema generation has no user
            return Course.objects.none()
        user: User = self.request.user  # type: ignore[assignment]
        return with_role(course_list(user=user), user)

    @extend_schema(responses={200: CourseListSerializer(many=True), **ERRORS})
    def get(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().get(request, *args, **kwargs)
