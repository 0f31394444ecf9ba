from __future__ import annotations

from typing import Any

from rest_framework.exceptions import NotFound
from rest_framework.pagination import PageNumberPagination

from apps.core.errors import DomainError


class StandardPagination(PageNumberPagination):
    """?page=N&page_size=M (at most 500). A page that does not exist is a 400 naming the
    pages there are, not a bare 404: the request was wrong, the list is there."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request: Any) -> int:
        """What the schema says, enforced: a whole number from 1 to 500, or a 400 naming it
        (DRF would quietly cap 501 at 500 and take `null` as the default)."""
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        if not raw.isdigit() or not 1 <= int(raw) <= self.max_page_size:
            raise DomainError(
                f"page_size is a whole number from 1 to {self.max_page_size}; got {raw!r}.",
                field=self.page_size_query_param,
            )
        return int(raw)

    def paginate_queryset(self, queryset: Any, request: Any, view: Any = None) -> Any:
        try:
            return super().paginate_queryset(queryset, request, view)
        except NotFound as exc:
            pages = getattr(getattr(self, "page", None), "paginator", None)
            count = len(queryset) if isinstance(queryset, (list, tuple)) else queryset.count()
            size = self.get_page_size(request) or self.page_size
            last = max(1, -(-count // size)) if pages is None else pages.num_pages
            raise DomainError(
                f"There is no page {request.query_params.get(self.page_query_param)!r}: "
                f"pages run from 1 to {last}.",
                field=self.page_query_param,
            ) from exc

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        params = super().get_schema_operation_parameters(view)
        for p in params:
            if p["name"] == self.page_query_param:
                p["schema"] = {"type": "integer", "minimum": 1}
            if p["name"] == self.page_size_query_param:
                p["schema"] = {"type": "integer", "minimum": 1, "maximum": self.max_page_size}
        return params
