"""Your SSH public keys over the API (not course-scoped): list, add, remove."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.compute.board import sshkeys
from apps.compute.models import SshKey
from apps.core.api.helpers import error_responses
from apps.core.models import User

E = error_responses(
    e409="You added this key already, it belongs to another account, or you have 5."
)
TAGS = ["compute"]


class SshKeySerializer(serializers.ModelSerializer):
    class Meta:
        model = SshKey
        fields = ("id", "kind", "bits", "fingerprint", "public_key", "label", "created_at")
        read_only_fields = fields


class SshKeyInSerializer(serializers.Serializer):
    key = serializers.CharField(
        max_length=sshkeys.MAX_TEXT,
        help_text="One OpenSSH public-key line: ssh-ed25519, ecdsa-sha2-nistp256/384/521 or "
        "ssh-rsa of at least 3,072 bits.",
    )
    name = serializers.CharField(
        max_length=80,
        required=False,
        allow_blank=True,
        default="",
        help_text="Which machine it is on, e.g. laptop (stored as the key's label).",
    )


class SshKeysView(APIView):
    @extend_schema(
        tags=TAGS,
        summary="Your SSH public keys",
        responses={200: SshKeySerializer(many=True), **E},
    )
    def get(self, request: Request) -> Response:
        user: User = request.user  # type: ignore[assignment]
        return Response(SshKeySerializer(SshKey.objects.filter(user=user), many=True).data)

    @extend_schema(
        tags=TAGS,
        summary="Add an SSH public key (checked; its fingerprint returned)",
        request=SshKeyInSerializer,
        responses={201: SshKeySerializer, **E},
    )
    def post(self, request: Request) -> Response:
        s = SshKeyInSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        user: User = request.user  # type: ignore[assignment]
        k = sshkeys.key_add(
            actor=user, text=s.validated_data["key"], label=s.validated_data["name"]
        )
        return Response(SshKeySerializer(k).data, status=201)


class SshKeyView(APIView):
    @extend_schema(
        tags=TAGS, summary="Remove one of your SSH keys", request=None, responses={204: None, **E}
    )
    def delete(self, request: Request, key_id: int) -> Response:
        user: User = request.user  # type: ignore[assignment]
        sshkeys.key_remove(actor=user, key_id=key_id)
        return Response(status=204)
