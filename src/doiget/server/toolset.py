"""How a toolset plugs into the server: typed tools with handlers, plus optional resources.

A tool is its contract (a request model and a reply model, see :mod:`doiget.contract`),
a description, hints and the coroutine that serves it. A toolset is plain data plus
async callables, so building one costs nothing: the heavy parts it calls (network,
store, PDF libraries) are imported on first use.
"""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from doiget.contract import Closable, RequestT, parse
from doiget.envelopes import PAPERS_ENVELOPE, Envelope
from doiget.server.schema import input_schema, output_schema

Result = dict[str, Any]


class ToolCall(Protocol):
    """What a tool handler may use besides its arguments."""

    async def progress(self, done: float, total: int, message: str) -> None:
        """Report progress (a no-op unless the client asked for it)."""

    async def roots(self) -> list[str]:
        """The local folders the client declared as its roots (MCP ``roots/list``);
        empty when it declares none."""

    async def confirm(self, message: str, details: Mapping[str, Any]) -> bool | None:
        """Ask the user to approve what ``message`` (and ``details``) describe: True when
        they accept, False when they decline or dismiss it, None when the client cannot
        ask (MCP elicitation)."""


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
            # What the server holds from now on (modules, schemas, the core) lives as
            # long as the process: the garbage collector stops scanning it again and
            # again, which would pause every call once the heap has grown.
            gc.freeze()
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


class ServedTool(Protocol):
    """What the server needs of a tool: its listing, and a call from raw arguments."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def hints(self) -> Hints: ...
    @property
    def envelope(self) -> Envelope: ...
    @property
    def ref_field(self) -> str | None: ...
    @property
    def input_schema(self) -> Mapping[str, Any]: ...
    @property
    def output_schema(self) -> Mapping[str, Any]: ...

    async def call(self, arguments: Any, call: ToolCall) -> Any:
        """Parse ``arguments`` (INVALID_REF when they do not fit) and run the tool."""


@dataclass(frozen=True)
class Tool(Generic[RequestT]):
    """One MCP tool: its typed contract and the coroutine that serves it.

    ``ref_field`` names the request field a papers error echoes as ``ref``.
    """

    name: str
    description: str
    request: type[RequestT]
    reply: type[BaseModel]
    hints: Hints
    handler: Callable[[RequestT, ToolCall], Awaitable[Any]]
    envelope: Envelope = PAPERS_ENVELOPE
    ref_field: str | None = None

    @cached_property
    def input_schema(self) -> Mapping[str, Any]:
        return input_schema(self.request)

    @cached_property
    def output_schema(self) -> Mapping[str, Any]:
        return output_schema(self.reply)

    async def call(self, arguments: Any, call: ToolCall) -> Any:
        return await self.handler(parse(self.request, arguments), call)


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
    tools: Sequence[ServedTool]
    instructions: str = ""  # joined into the server instructions agents read at start
    list_resources: Callable[[], Awaitable[list[ResourceItem]]] | None = None
    read_resource: Callable[[str], Awaitable[ResourceBody | None]] | None = None
    close: Callable[[], Awaitable[None]] | None = None
    templates: Sequence[ResourceTemplate] = ()
    extra: dict[str, Any] = field(default_factory=dict)


SECTIONS = ("WHEN TO USE:", "INPUTS:", "OUTPUTS:", "COSTS:", "SIDE EFFECTS:", "LIMITS:")


def describe(
    *, when: str, inputs: str, outputs: str, costs: str, side_effects: str, limits: str
) -> str:
    """A tool description in the six-section format agents are told to expect."""
    parts = (when, inputs, outputs, costs, side_effects, limits)
    return "\n".join(f"{head} {body}" for head, body in zip(SECTIONS, parts, strict=True))
