"""A person's SSH public keys: add one (checked as OpenSSH reads it, fingerprint shown), remove
one. Not course-scoped: the same keys open every node a person is given."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from apps.compute.board import sshkeys
from apps.compute.models import SshKey
from apps.core.http import AuthedRequest
from apps.core.views_helpers import errors_as_messages, form_kept


@login_required
@require_GET
def keys_page(request: AuthedRequest) -> HttpResponse:
    return render(
        request,
        "compute/ssh_keys.html",
        {
            "keys": SshKey.objects.filter(user=request.user),
            "kept": form_kept(request, "ssh-key"),
            "most": sshkeys.MAX_KEYS,
            "min_rsa": sshkeys.MIN_RSA_BITS,
        },
    )


@login_required
@require_POST
def key_add(request: AuthedRequest) -> HttpResponseBase:
    with errors_as_messages(request, form="ssh-key", field_ids={"key": "ssh-key"}):
        k = sshkeys.key_add(
            actor=request.user,
            text=request.POST.get("key", ""),
            label=request.POST.get("label", ""),
        )
        messages.success(request, f"Key added: {k.kind}, {k.fingerprint}.")
    return redirect("compute:ssh-keys")


@login_required
@require_POST
def key_remove(request: AuthedRequest, key_id: int) -> HttpResponseBase:
    with errors_as_messages(request):
        sshkeys.key_remove(actor=request.user, key_id=key_id)
        messages.success(request, "Key removed.")
    return redirect("compute:ssh-keys")
