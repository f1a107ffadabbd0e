"""The tool listing: generated from the declarations, kept current, client-safe schemas."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator

from doiget.server.snapshot import generated, listing, render, stored


def _nodes(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """``schema`` and every subschema in it, shared definitions included."""
    yield schema
    children: list[Any] = [*schema.get("properties", {}).values(), *schema.get("anyOf", [])]
    children += schema.get("$defs", {}).values()
    children += [schema.get("items"), schema.get("additionalProperties")]
    for child in children:
        if isinstance(child, dict):
            yield from _nodes(child)


def test_the_stored_listing_is_what_the_declarations_say() -> None:
    assert render(stored()) == render(generated()), (
        "src/doiget/server/tool_listing.json is stale: run python -m doiget.server.snapshot"
    )


def test_schemas_use_only_forms_strict_clients_accept() -> None:
    for toolset in generated().values():
        for tool in toolset["tools"]:
            for kind in ("inputSchema", "outputSchema"):
                Draft202012Validator.check_schema(tool[kind])
                defs = tool[kind].get("$defs", {})
                for node in _nodes(tool[kind]):
                    assert not isinstance(node.get("type"), list), (tool["name"], kind, node)
                    assert "title" not in node, (tool["name"], kind, node)
                    if "$ref" in node:  # only to a definition in the same schema
                        name = node["$ref"].removeprefix("#/$defs/")
                        assert name in defs and "/" not in name, (tool["name"], kind, node)
                    if node is not tool[kind]:
                        assert "$defs" not in node, (tool["name"], kind, node)
                    if kind == "outputSchema":
                        assert "description" not in node, (tool["name"], node)
            assert tool["inputSchema"]["type"] == "object", tool["name"]
            assert tool["inputSchema"]["additionalProperties"] is False, tool["name"]


def test_a_listing_is_served_only_when_it_covers_every_selected_toolset() -> None:
    served = listing(["papers", "scholar"])
    assert served is not None and len(served.instructions) == 2
    assert {tool["name"] for tool in served.tools} >= {"doiget_fetch_paper", "search_arxiv"}
    assert listing(["papers", "not-a-toolset"]) is None


def test_a_shape_used_twice_is_written_once() -> None:
    tools = {tool["name"]: tool for toolset in stored().values() for tool in toolset["tools"]}
    schema = tools["sequential_search"]["outputSchema"]
    steps, last_steps = schema["properties"]["steps"], schema["properties"]["lastSteps"]
    assert steps["items"] == last_steps["items"] == {"$ref": "#/$defs/ResearchStep"}
    assert set(schema["$defs"]) == {"ResearchStep"}
