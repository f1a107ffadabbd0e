"""How a toolset plugs into the server: tool specs with handlers, plus optional resources.

A toolset is plain data plus async callables, so building one costs nothing: the
heavy parts it calls (network, store, PDF libraries) are imported on first use.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from doiget.server.envelopes import PAPERS_ENVELOPE, Envelope

Result = dict[str, Any]


class ToolCall(Protocol):
    """What a tool handler may use besides its arguments."""

    async def progress(self, done: int, total: int, message: str) -> None:
        """Report progress (a no-op unless the client asked for it)."""


# A handler returns what its envelope renders: a result object, a list or a string.
Handler = Callable[[Mapping[str, Any], ToolCall], Awaitable[Any]]


class Closable(Protocol):
    """A core that holds connections or files until closed."""

    async def aclose(self) -> None:
        """Release what the core holds."""


CoreT = TypeVar("CoreT", bound=Closable)


class LazyCore(Generic[CoreT]):
    """A toolset's core, built on the first tool call so listing tools loads nothing heavy."""

    def __init__(self, build: Callable[[], CoreT]) -> None:
        self._build = build
        self._core: CoreT | None = None

    def get(self) -> CoreT:
        """The core, built now if no call has needed it yet."""
        if self._core is None:
            self._core = self._build()
        return self._core

    async def close(self) -> None:
        """Close the core if it was built (a later call builds a fresh one)."""
        core, self._core = self._core, None
        if core is not None:
            await core.aclose()


@dataclass(frozen=True)
class Hints:
    """MCP tool annotations, stated for every tool."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: its contract and the coroutine that serves it."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any]
    hints: Hints
    handler: Handler
    ref_field: str | None = "ref"  # echoed as ``ref`` in an error envelope
    envelope: Envelope = PAPERS_ENVELOPE


@dataclass(frozen=True)
class ResourceItem:
    """One readable resource."""

    uri: str
    name: str
    title: str | None
    mime_type: str
    size: int | None = None


@dataclass(frozen=True)
class ResourceBody:
    """A read resource: text or bytes."""

    uri: str
    mime_type: str
    text: str | None = None
    data: bytes | None = None


@dataclass(frozen=True)
class ResourceTemplate:
    """A family of readable resources named by a URI template."""

    uri_template: str
    name: str
    description: str
    mime_type: str


@dataclass
class Toolset:
    """A named group of tools (and resources) selected by ``--toolsets``."""

    name: str
    tools: Sequence[ToolSpec]
    instructions: str = ""  # joined into the server instructions agents read at start
    list_resources: Callable[[], Awaitable[list[ResourceItem]]] | None = None
    read_resource: Callable[[str], Awaitable[ResourceBody | None]] | None = None
    close: Callable[[], Awaitable[None]] | None = None
    templates: Sequence[ResourceTemplate] = ()
    extra: dict[str, Any] = field(default_factory=dict)


def object_schema(properties: Mapping[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    """A strict object schema: the named properties, ``required`` ones, nothing else."""
    return {
        "type": "object",
        "required": list(required),
        "properties": dict(properties),
        "additionalProperties": False,
    }


def tool_spec(
    name: str,
    description: str,
    inputs: Mapping[str, Any],
    required: Sequence[str],
    output: Mapping[str, Any],
    hints: Hints,
    handler: Handler,
    envelope: Envelope,
) -> ToolSpec:
    """A tool that takes no ref: strict input schema, the given envelope."""
    return ToolSpec(
        name,
        description,
        object_schema(inputs, required),
        dict(output),
        hints,
        handler,
        ref_field=None,
        envelope=envelope,
    )


SECTIONS = ("WHEN TO USE:", "INPUTS:", "OUTPUTS:", "COSTS:", "SIDE EFFECTS:", "LIMITS:")


def describe(
    *, when: str, inputs: str, outputs: str, costs: str, side_effects: str, limits: str
) -> str:
    """A tool description in the six-section format agents are told to expect."""
    parts = (when, inputs, outputs, costs, side_effects, limits)
    return "\n".join(f"{head} {body}" for head, body in zip(SECTIONS, parts, strict=True))
