"""Compact JSON Schema from the contract models, in forms strict clients accept.

pydantic's schemas carry titles, ``$defs`` references and ``anyOf [X, null]`` for
every optional field. What tools/list sends is smaller and plainer: no titles,
every reference inlined, an optional input is simply not required, and an optional
output field is its own type unless the model marks it as present-but-null
(:data:`doiget.contract.NULLABLE`), which stays an ``anyOf`` (never a type array).
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel

_NULL: Final = {"type": "null"}
_NULLABLE_MARK: Final = "x-nullable"


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The inputSchema of a request model (defaults kept, null branches dropped: an
    optional input is one not required)."""
    raw = model.model_json_schema(by_alias=True, mode="validation")
    schema: dict[str, Any] = _compact(raw, raw.get("$defs", {}), keep_null=False)
    schema.setdefault("properties", {})
    return schema


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The outputSchema of a reply model (no defaults; null only where it can occur).

    A field that is required, or marked NULLABLE, keeps its null branch; any other
    optional field is absent rather than null, so it is listed as its plain type.
    """
    raw = model.model_json_schema(by_alias=True, mode="serialization")
    schema: dict[str, Any] = _compact(raw, raw.get("$defs", {}), keep_null=False, output=True)
    return schema


def _compact(node: Any, defs: dict[str, Any], *, keep_null: bool, output: bool = False) -> Any:
    if isinstance(node, list):
        return [_compact(item, defs, keep_null=keep_null, output=output) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        return _compact(
            {**target, **{k: v for k, v in node.items() if k != "$ref"}},
            defs,
            keep_null=keep_null,
            output=output,
        )
    nullable = bool(node.get(_NULLABLE_MARK))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "$defs", _NULLABLE_MARK):
            continue
        if key == "description" and "properties" in node:
            continue  # a model's docstring: for the code's readers, not the agent's context
        if key == "default" and (output or value is None):
            continue
        if key == "properties":
            required = set(node.get("required", ()))
            out[key] = {
                name: _compact(prop, defs, keep_null=output and name in required, output=output)
                for name, prop in value.items()
            }
            continue
        out[key] = _compact(value, defs, keep_null=keep_null, output=output)
    branches = out.get("anyOf")
    if isinstance(branches, list) and _NULL in branches and not (keep_null or nullable):
        rest = [branch for branch in branches if branch != _NULL]
        del out["anyOf"]
        out = {**rest[0], **out} if len(rest) == 1 else {"anyOf": rest, **out}
    if out.get("required") == []:
        del out["required"]
    return out
