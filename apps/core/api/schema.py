"""drf-spectacular post-processing: every status an operation can answer is in the schema.

Views document their own rule errors (400/403/404/409 with their texts). What any operation can
answer whatever its view says is added here, once, with the shared error shape: 401 when it needs
a login, 400 when it takes input, 404 under a course or an object id, 429 and 503 everywhere
(a locked-out log-in; the database or queue briefly gone).
"""

from __future__ import annotations

from typing import Any

ERROR_REF = {"$ref": "#/components/schemas/Error"}

ALWAYS = {
    503: "Briefly unavailable: the database or the task queue did not answer; nothing changed.",
}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ERROR_REF}}}


def add_error_responses(
    result: dict[str, Any], generator: Any, request: Any, public: Any
) -> dict[str, Any]:
    for path, item in result.get("paths", {}).items():
        for method, op in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            responses = op.setdefault("responses", {})
            needs_login = op.get("security") != [] and {} not in op.get("security", [{}])
            wanted: dict[int, str] = dict(ALWAYS)
            if needs_login:
                wanted[401] = "Not logged in."
                wanted[403] = "Not allowed for your role."
            if op.get("parameters") or op.get("requestBody"):
                wanted[400] = "Invalid input; the message names the field or rule."
            if "{" in path:
                wanted[404] = "No such course or object, or not one you may see."
            if path.endswith("/auth/token/"):
                wanted[429] = "Too many failed log-ins: locked until the time in the message."
            for code, text in wanted.items():
                responses.setdefault(str(code), _error(text))
    for name, component in result.get("components", {}).get("schemas", {}).items():
        # The calculator refuses inputs a formula does not have; say so in its input schemas.
        if name.endswith("InputRequest") and component.get("type") == "object":
            component["additionalProperties"] = False
    error = result.get("components", {}).get("schemas", {}).get("Error")
    if error is not None:  # DRF's Serializer.errors is taken, so the field is described here
        error["properties"]["errors"] = {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
            "description": "Invalid input: each field at fault with its messages "
            "(`non_field_errors` for rules across fields).",
        }
    result.setdefault("components", {}).setdefault("schemas", {}).setdefault(
        "Error",
        {
            "type": "object",
            "properties": {
                "detail": {"type": "string"},
                "code": {"type": "string"},
                "field": {"type": "string"},
            },
            "required": ["detail", "code"],
        },
    )
    return result
