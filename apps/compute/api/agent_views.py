"""The node agent posts GPU samples here, authenticated with its node's token (not a person's
session or API token: the node is not a user)."""

from __future__ import annotations

import datetime as dt
import hashlib

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.compute.models import GpuSample, Node

MIN_GAP_S = 60


class GpuSerializer(serializers.Serializer):
    util = serializers.FloatField(min_value=0, max_value=100, help_text="Utilisation, percent.")
    mem_used_mib = serializers.IntegerField(min_value=0, max_value=10_000_000)


class SampleSerializer(serializers.Serializer):
    gpus = GpuSerializer(many=True, min_length=1, max_length=64)  # type: ignore[call-arg]


class AgentSampleView(APIView):
    authentication_classes: list[type] = []
    permission_classes = [AllowAny]
    throttle_classes: list[type] = []

    @extend_schema(
        tags=["compute"],
        operation_id="compute_agent_sample",
        summary="A node agent's GPU sample (Authorization: Bearer <the node's agent token>)",
        request=SampleSerializer,
        responses={
            201: OpenApiResponse(description="Recorded."),
            200: OpenApiResponse(description="Skipped: less than a minute since the last."),
            400: OpenApiResponse(description="The body names the field that is wrong."),
            401: OpenApiResponse(description="No token, or not a node's current token."),
        },
        auth=[],
    )
    def post(self, request: Request) -> Response:
        header = request.headers.get("Authorization", "")
        token = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
        node = (
            Node.objects.filter(agent_token_hash=hashlib.sha256(token.encode()).hexdigest()).first()
            if token
            else None
        )
        if node is None:
            return Response(
                {"detail": "Not a node agent's current token; issue one on the node's agent page."},
                status=status.HTTP_401_UNAUTHORIZED,
            )
        s = SampleSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        from django.utils import timezone

        now = timezone.now()
        recent = GpuSample.objects.filter(node=node, at__gt=now - dt.timedelta(seconds=MIN_GAP_S))
        if recent.exists():
            return Response({"detail": "skipped: less than a minute since the last sample"})
        gpus = s.validated_data["gpus"]
        utils = [g["util"] for g in gpus]
        GpuSample.objects.create(
            node=node,
            at=now,
            util_mean=sum(utils) / len(utils),
            util_max=max(utils),
            mem_used_mib=sum(g["mem_used_mib"] for g in gpus),
            gpus=len(gpus),
        )
        return Response({"detail": "recorded"}, status=status.HTTP_201_CREATED)
