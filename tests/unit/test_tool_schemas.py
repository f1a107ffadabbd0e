"""The tools' JSON Schemas: generated from the contract models, kept current, client-safe."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator

from doiget.server.snapshot import generated, render, stored


def _nodes(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """``schema`` and every subschema in it."""
    yield schema
    children: list[Any] = [*schema.get("properties", {}).values(), *schema.get("anyOf", [])]
    children += [schema.get("items"), schema.get("additionalProperties")]
    for child in children:
        if isinstance(child, dict):
            yield from _nodes(child)


def test_the_stored_schemas_are_the_models_schemas() -> None:
    assert render(stored()) == render(generated()), (
        "src/doiget/server/tool_schemas.json is stale: run python -m doiget.server.snapshot"
    )


def test_schemas_use_only_forms_strict_clients_accept() -> None:
    for name, body in generated().items():
        for kind in ("input", "output"):
            Draft202012Validator.check_schema(body[kind])
            for node in _nodes(body[kind]):
                assert not isinstance(node.get("type"), list), (name, kind, node)
                assert not {"title", "$ref", "$defs"} & set(node), (name, kind, node)
        assert body["input"]["type"] == "object", name
        assert body["input"]["additionalProperties"] is False, name
