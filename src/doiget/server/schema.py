"""Compact JSON Schema from the contract models, in forms strict clients accept.

pydantic's schemas carry titles, ``$defs`` references and ``anyOf [X, null]`` for
every optional field. What tools/list sends is smaller and plainer: no titles; a
shape used once is written where it is used, and one used more than once is written
once under the schema's own ``$defs`` when that is shorter; ``type`` is left out where
``const`` or ``enum`` already fixes the value, or where it repeats the type of the node
whose ``anyOf`` holds it; an optional input is simply not
required, and an optional output field is its own type unless the model marks it as
present-but-null (:data:`doiget.contract.NULLABLE`), which stays an ``anyOf`` (never a
type array). Output schemas carry no descriptions and no defaults: they check replies,
and the tool's description is what tells an agent what a reply means.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Final

from pydantic import BaseModel

_NULL: Final = {"type": "null"}
_NULLABLE_MARK: Final = "x-nullable"
_DEFS_PREFIX: Final = "#/$defs/"


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The inputSchema of a request model (defaults kept, null branches dropped: an
    optional input is one not required)."""
    raw = model.model_json_schema(by_alias=True, mode="validation")
    schema = _Compactor(raw, output=False).schema()
    schema.setdefault("properties", {})
    return schema


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The outputSchema of a reply model (no defaults; null only where it can occur).

    A field that is required, or marked NULLABLE, keeps its null branch; any other
    optional field is absent rather than null, so it is listed as its plain type.
    """
    raw = model.model_json_schema(by_alias=True, mode="serialization")
    return _Compactor(raw, output=True).schema()


class _Compactor:
    """Rewrites one pydantic schema; ``shared`` maps a pydantic definition kept under
    ``$defs`` to the short name it gets there."""

    def __init__(self, raw: dict[str, Any], *, output: bool) -> None:
        self.raw = raw
        self.defs: dict[str, Any] = raw.get("$defs", {})
        self.output = output
        self.shared: dict[str, str] = {}

    def schema(self) -> dict[str, Any]:
        self.shared = self._worth_sharing()
        out: dict[str, Any] = self.compact(self.raw, keep_null=False)
        if self.shared:
            out["$defs"] = {
                short: self.compact(self.defs[name], keep_null=False)
                for name, short in self.shared.items()
            }
        return out

    def _worth_sharing(self) -> dict[str, str]:
        """The definitions that make the schema shorter when written once and referenced.

        Sharing a definition also shares what it contains, so its parts are counted once
        per use of the definition: drop the choices that no longer pay until none does
        (the choice only shrinks, so this ends).
        """
        names = _short_names(self.defs)
        candidates, chosen = set(self.defs), set[str]()
        while True:
            uses = self._uses(chosen)
            keep = {
                name
                for name in candidates
                if uses[name] > 1 and self._saves(name, names[name], uses[name])
            }
            if keep == chosen:
                return {name: names[name] for name in sorted(chosen)}
            candidates = chosen = keep

    def _uses(self, chosen: set[str]) -> Counter[str]:
        uses: Counter[str] = Counter()

        def walk(node: Any) -> None:
            if isinstance(node, list):
                for item in node:
                    walk(item)
            elif isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str):
                    name = ref.removeprefix(_DEFS_PREFIX)
                    uses[name] += 1
                    if name not in chosen or uses[name] == 1:
                        walk(self.defs[name])
                for key, value in node.items():
                    if key != "$defs":
                        walk(value)

        walk(self.raw)
        return uses

    def _saves(self, name: str, short: str, count: int) -> bool:
        inline = _size(
            _Compactor(self.raw, output=self.output).compact(self.defs[name], keep_null=False)
        )
        reference = _size({"$ref": _DEFS_PREFIX + short})
        return count * inline > count * reference + inline + len(short) + 3

    def compact(self, node: Any, *, keep_null: bool) -> Any:
        if isinstance(node, list):
            return [self.compact(item, keep_null=keep_null) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            name = node["$ref"].removeprefix(_DEFS_PREFIX)
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if name in self.shared:
                return {
                    "$ref": _DEFS_PREFIX + self.shared[name],
                    **self.compact(siblings, keep_null=keep_null),
                }
            return self.compact({**self.defs[name], **siblings}, keep_null=keep_null)
        nullable = bool(node.get(_NULLABLE_MARK))
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("title", "$defs", _NULLABLE_MARK):
                continue
            if key == "description" and (self.output or "properties" in node):
                continue  # a model's docstring is for the code's readers
            if key == "default" and (self.output or value is None):
                continue
            if key == "properties":
                required = set(node.get("required", ()))
                out[key] = {
                    name: self.compact(prop, keep_null=self.output and name in required)
                    for name, prop in value.items()
                }
                continue
            out[key] = self.compact(value, keep_null=keep_null)
        branches = out.get("anyOf")
        if isinstance(branches, list) and _NULL in branches and not (keep_null or nullable):
            rest = [branch for branch in branches if branch != _NULL]
            del out["anyOf"]
            out = {**rest[0], **out} if len(rest) == 1 else {"anyOf": rest, **out}
        if out.get("required") == []:
            del out["required"]
        if "const" in out or "enum" in out:
            out.pop("type", None)
        for branch in out.get("anyOf", ()):
            if "type" in out and branch.get("type") == out["type"]:
                del branch["type"]  # the node's own type already holds for every branch
        return out


def _short_names(defs: dict[str, Any]) -> dict[str, str]:
    """pydantic's definition names, module prefixes dropped where that stays unique."""
    short = {name: name.rsplit("__", 1)[-1] for name in defs}
    clashes = {s for s, n in Counter(short.values()).items() if n > 1}
    return {name: name if s in clashes else s for name, s in short.items()}


def _size(node: Any) -> int:
    return len(json.dumps(node, separators=(",", ":")))
