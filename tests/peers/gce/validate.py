"""Request bodies checked against Compute Engine's own message types — the `google.cloud.
compute_v1` classes the client ships — so the peer refuses what the real API refuses.

`parse(Firewall, body, "firewall_resource")` returns the message or raises `Fail` with the API's
400 shape. Two checks, as the API makes them:

- an unknown field is refused: "Invalid JSON payload received. Unknown name "x" at
  'firewall_resource': Cannot find field." (proto3 JSON mapping, which the REST gateway applies:
  https://protobuf.dev/programming-guides/json/ — unknown fields are rejected by default);
- a value outside a field's enum is refused. Compute Engine's v1 messages carry enum-valued
  fields as strings with the values in a nested enum named after the field (Firewall.direction
  → Firewall.Direction, AccessConfig.type → AccessConfig.Type); the API reference lists those
  values as the only ones accepted (https://cloud.google.com/compute/docs/reference/rest/v1/
  firewalls — "direction: enum, INGRESS | EGRESS").

Any route module of the peer calls `parse` for every body it accepts.
"""

from __future__ import annotations

import enum
import json
from typing import Any

from google.protobuf import json_format


class Fail(Exception):
    """An API error: HTTP code, message, the `errors[].reason` Compute Engine gives."""

    def __init__(self, code: int, message: str, reason: str = "", status: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.reason, self.status = code, message, reason, status


def error_body(code: int, message: str, reason: str = "", status: str = "") -> dict[str, Any]:
    """The JSON error Compute Engine answers with (https://cloud.google.com/compute/docs/
    api/how-tos/api-requests-responses#handling_api_errors): `error.code`, `error.message`,
    `error.errors[]` with domain/reason/message, and the canonical `status`."""
    canonical = {
        400: "INVALID_ARGUMENT",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        409: "ALREADY_EXISTS",
        412: "FAILED_PRECONDITION",
        429: "RESOURCE_EXHAUSTED",
        500: "INTERNAL",
        503: "UNAVAILABLE",
    }
    return {
        "error": {
            "code": code,
            "message": message,
            "errors": [{"domain": "global", "reason": reason or "error", "message": message}],
            "status": status or canonical.get(code, "UNKNOWN"),
        }
    }


def _camel_enum(field_name: str) -> str:
    return "".join(part.capitalize() for part in field_name.rstrip("_").split("_"))


def _check_enums(cls: Any, data: Any, where: str) -> None:
    """Walk the JSON alongside the message class; every string whose field has a nested enum
    of the same name must be one of that enum's values (not its UNDEFINED_ placeholder)."""
    if not isinstance(data, dict):
        return
    descriptor = cls.pb().DESCRIPTOR
    by_json = {f.json_name: f for f in descriptor.fields} | {f.name: f for f in descriptor.fields}
    for key, value in data.items():
        field = by_json.get(key)
        if field is None:
            continue
        py_name = field.name if field.name in cls.meta.fields else f"{field.name}_"
        meta = cls.meta.fields.get(py_name)
        values = value if isinstance(value, list) else [value]
        if meta is not None and meta.message is not None and hasattr(meta.message, "pb"):
            for v in values:
                _check_enums(meta.message, v, f"{where}.{field.name}")
            continue
        kind = getattr(cls, _camel_enum(field.name), None)
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            allowed = {m.name for m in kind if not m.name.startswith("UNDEFINED_")}
            for v in values:
                if isinstance(v, str) and v not in allowed:
                    full = f"{descriptor.full_name}.{kind.__name__}"
                    raise Fail(
                        400,
                        f"Invalid value at '{where}.{field.name}' (type.googleapis.com/{full}), "
                        f'"{v}"',
                        "invalid",
                    )


def parse(cls: Any, body: Any, where: str) -> Any:
    """`body` (decoded JSON) as a `cls` message, or `Fail` 400 as the API words it."""
    if not isinstance(body, dict):
        raise Fail(
            400, f"Invalid JSON payload received. Expected an object at '{where}'.", "parseError"
        )
    try:
        message = cls.from_json(json.dumps(body), ignore_unknown_fields=False)
    except json_format.ParseError as exc:
        text = str(exc)
        if "has no field named" in text:
            unknown = text.split('has no field named "', 1)[1].split('"', 1)[0]
            raise Fail(
                400,
                f"Invalid JSON payload received. Unknown name \"{unknown}\" at '{where}': "
                "Cannot find field.",
                "invalid",
            ) from exc
        raise Fail(
            400, f"Invalid JSON payload received. {text.splitlines()[0]}", "invalid"
        ) from exc
    _check_enums(cls, body, where)
    return message
