"""The account's API tokens page: each client's token by name, when it was made and last used;
make one (its key shown once) or revoke one alone, after a confirmation."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.core.http import AuthedRequest
from apps.core.models import ApiToken
from apps.core.tokens import token_create, token_revoke, tokens_of


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100,
        help_text="Which client will use it, e.g. 'grading laptop' or 'CI job'; you revoke it "
        "by this name later.",
    )


@login_required
@require_GET
def tokens_page(request: AuthedRequest) -> HttpResponse:
    return render(
        request,
        "core/tokens.html",
        {"tokens": tokens_of(request.user), "form": TokenForm(), "new_key": None},
    )


@login_required
@require_POST
def token_make(request: AuthedRequest) -> HttpResponse:
    form = TokenForm(request.POST)
    if not form.is_valid():
        return render(
            request,
            "core/tokens.html",
            {"tokens": tokens_of(request.user), "form": form, "new_key": None},
            status=400,
        )
    token, key = token_create(user=request.user, name=form.cleaned_data["name"])
    return render(
        request,
        "core/tokens.html",
        {"tokens": tokens_of(request.user), "form": TokenForm(), "new_key": key, "made": token},
    )


@login_required
@require_http_methods(["GET", "POST"])
def token_revoke_view(request: AuthedRequest, token_id: int) -> HttpResponseBase:
    """GET: are you sure (which clients stop); POST: revoke this one token."""
    token = ApiToken.objects.filter(user=request.user, pk=token_id).first()
    if token is None:
        raise Http404("You have no such token.")
    if request.method == "GET":
        return render(request, "core/token_revoke.html", {"token": token})
    token_revoke(user=request.user, token_id=token.pk)
    messages.success(request, f"Revoked {token.name}; your other tokens keep working.")
    return redirect("tokens")
