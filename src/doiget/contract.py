"""Typed tool contracts: one model per tool input (its schema and its parser) and output.

A tool's input is a :class:`Request` subclass: its fields, aliases (the camelCase names
agents send), bounds and defaults are the JSON Schema the server lists, and
:func:`parse` turns the arguments an agent or the command line gave into that model,
or into an ``INVALID_REF`` error that says what to send instead. A tool's output is a
:class:`Reply` subclass. The MCP server parses arguments into the request model and the
CLI builds the same model from its options, so both check input alike; a core given a
request reads typed fields, never wire names.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Final, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from doiget.errors import DoigetError, ErrorCode, quoted


class Closable(Protocol):
    """A core that holds connections or files until closed."""

    async def aclose(self) -> None:
        """Release what the core holds."""


@dataclass(frozen=True, slots=True)
class Hint:
    """What a field accepts, in words: the error text when a value does not match.

    Put in a field's ``Annotated`` metadata; it never reaches the schema.
    """

    text: str


class Request(BaseModel):
    """A tool's input: unknown fields refused, JSON types taken strictly, immutable."""

    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        strict=True,
        frozen=True,
        # Rust's regex: ``$`` is the end of the text, as in JSON Schema, where Python's
        # also matches before a final newline (``"lab/x\n"`` would pass a pattern).
        regex_engine="rust-regex",
        defer_build=True,
    )


class NoArguments(Request):
    """The input of a tool that takes nothing."""


class Reply(BaseModel):
    """A tool's output; fields are read and written by their wire names.

    A reply with ``sparse`` set renders only the fields it was given (explicit nulls
    included), for toolsets whose results leave out what does not apply.
    """

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True, defer_build=True)
    sparse: ClassVar[bool] = False


def plain(value: Any) -> Any:
    """A result as JSON data: typed replies (and lists of them) by their wire names,
    nulls kept; anything else as it is."""
    if isinstance(value, Reply):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=value.sparse)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


# An output field that may be present with the value null (not merely absent):
# ``Annotated[str | None, NULLABLE] = None``. Without it, an optional output field is
# listed as its plain type, absent when there is no value.
NULLABLE: Final = Field(json_schema_extra={"x-nullable": True})

# A request's optional sessionId: the sequential_search session its findings join.
LINK_SESSION: Final = "Add findings to this session."
SessionId = Annotated[
    str,
    Field(pattern="^[A-Za-z0-9_-]{1,100}$"),
    Hint("must be the session id sequential_search returned (up to 100 letters, digits, _, -)"),
]

RequestT = TypeVar("RequestT", bound=Request)

_TYPE_NAMES: Final = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "an array",
    "tuple_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}


@dataclass(frozen=True, slots=True)
class _Fields:
    """What error messages need to know of a model's fields, by wire and Python name."""

    hints: dict[str, str]
    wire_names: dict[str, str]
    ranges: dict[str, tuple[Any, Any]]


def _described(error: Mapping[str, Any], fields: _Fields) -> str:
    """One validation error as a sentence an agent can act on (no regular expressions)."""
    kind: str = error["type"]
    ctx: Mapping[str, Any] = error.get("ctx") or {}
    value = error.get("input")
    got = f" (got {quoted(value)})"
    loc = _path(error["loc"], fields)
    where = ".".join(loc) or "arguments"
    field = loc[-1] if loc else ""
    hints = fields.hints
    if kind == "missing":
        return f"{where} is required"
    if kind == "extra_forbidden":
        return f"{where} is not a parameter of this tool"
    if kind == "string_pattern_mismatch":
        return f"{where} {hints.get(field, 'is not in an accepted form')}{got}"
    if kind == "string_too_short":
        return f"{where} must have at least {ctx['min_length']} character(s)"
    if kind == "string_too_long":
        return f"{where} must have at most {ctx['max_length']} characters"
    if kind == "too_short":
        return f"{where} must have at least {ctx['min_length']} item(s)"
    if kind == "too_long":
        return f"{where} must have at most {ctx['max_length']} items"
    if kind in ("greater_than_equal", "less_than_equal") and field in fields.ranges:
        low, high = fields.ranges[field]
        return f"{where} must be from {low} to {high}{got}"
    if kind in ("greater_than_equal", "greater_than"):
        return f"{where} must be at least {ctx.get('ge', ctx.get('gt'))}{got}"
    if kind in ("less_than_equal", "less_than"):
        return f"{where} must be at most {ctx.get('le', ctx.get('lt'))}{got}"
    if kind in ("literal_error", "enum"):
        allowed = str(ctx.get("expected", "")).replace("'", "")
        return f"{where} must be one of {allowed.replace(' or ', ', ')}{got}"
    if kind in _TYPE_NAMES:
        return f"{where} must be {_TYPE_NAMES[kind]}{got}"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return f"{where}: {error['msg']}"


def _fields(model: type[BaseModel], into: _Fields | None = None) -> _Fields:
    """Hints, wire names and closed ranges of ``model``'s fields and nested models'."""
    found = into or _Fields({}, {}, {})
    for name, info in model.model_fields.items():
        wire = info.alias or name
        found.wire_names[name] = wire
        low = next((m.ge for m in info.metadata if getattr(m, "ge", None) is not None), None)
        high = next((m.le for m in info.metadata if getattr(m, "le", None) is not None), None)
        if low is not None and high is not None:
            found.ranges[wire] = (low, high)
        for item in info.metadata:
            if isinstance(item, Hint):
                found.hints[wire] = item.text
        for kind in (info.annotation, *getattr(info.annotation, "__args__", ())):
            # An optional field's hint sits on its union's annotated branch.
            for item in getattr(kind, "__metadata__", ()):
                if isinstance(item, Hint):
                    found.hints[wire] = item.text
            if isinstance(kind, type) and issubclass(kind, BaseModel) and kind is not model:
                _fields(kind, found)
    return found


def invalid(message: str, field: str | None = None) -> DoigetError:
    """Bad input: the error class every toolset renders as its own 'invalid input'.

    ``field`` is the input at fault by its wire name, as the message names it.
    """
    return DoigetError(ErrorCode.INVALID_REF, message, field=field)


def parse(model: type[RequestT], arguments: Any) -> RequestT:
    """``arguments`` (JSON values, as an MCP client sends them) as ``model``.

    Raises INVALID_REF naming the first wrong field and what it must be.
    """
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise invalid("arguments must be an object of named parameters.")
    try:
        return model.model_validate_json(json.dumps(dict(arguments), default=str))
    except ValidationError as failure:
        raise _refusal(model, failure) from None


def build(model: type[RequestT], **values: Any) -> RequestT:
    """``model`` from Python values (the command line's), with :func:`parse`'s errors."""
    try:
        return model(**values)
    except ValidationError as failure:
        raise _refusal(model, failure) from None


def _path(loc: Sequence[int | str], fields: _Fields) -> list[str]:
    """An error's location by wire names, without the type tags pydantic adds for the
    branches of a union (``filters.year.int``)."""
    return [
        fields.wire_names.get(str(part), str(part))
        for part in loc
        if not (isinstance(part, str) and (part in _UNION_TAGS or "[" in part))
    ]


_UNION_TAGS: Final = frozenset({"str", "int", "float", "bool", "list", "dict", "none"})


def _refusal(model: type[BaseModel], failure: ValidationError) -> DoigetError:
    errors = failure.errors(include_url=False)
    first = errors[0]
    fields = _fields(model)
    where = _path(first["loc"], fields)
    same_place = [e for e in errors if _path(e["loc"], fields) == where]
    if len(same_place) > 1:  # the branches of a union, each refusing the value
        kinds = [e["type"] for e in same_place]
        if all(kind in _TYPE_NAMES for kind in kinds):
            wanted = " or ".join(dict.fromkeys(_TYPE_NAMES[kind] for kind in kinds))
            got = quoted(first.get("input"))
            return invalid(f"{'.'.join(where)} must be {wanted} (got {got}).", ".".join(where))
        # The branch of the value's own type says what is wrong with it.
        first = next(e for e in same_place if e["type"] not in _TYPE_NAMES)
    message = _described(first, fields)
    if first["type"] == "extra_forbidden" and len(where) == 1:
        accepted = sorted(info.alias or name for name, info in model.model_fields.items())
        message += f"; accepted: {', '.join(accepted) or 'none'}"
    return invalid(message + ".", ".".join(where) or None)
