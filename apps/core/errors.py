"""Domain errors. Services raise them; the API turns them into 4xx, pages into form errors."""

from __future__ import annotations


class DomainError(Exception):
    """A rule of the course refused the request. `message` is shown to the user as is."""

    status_code = 400
    code = "invalid"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class NotAllowed(DomainError):
    status_code = 403
    code = "not_allowed"


class Conflict(DomainError):
    """The request clashes with the current state (taken, full, overlapping)."""

    status_code = 409
    code = "conflict"


class NotFound(DomainError):
    """No such object in this course, or not one the user may see (404, no existence leak)."""

    status_code = 404
    code = "not_found"


class Unavailable(DomainError):
    """A service the request needs (the task queue) did not answer; try again shortly."""

    status_code = 503
    code = "unavailable"
