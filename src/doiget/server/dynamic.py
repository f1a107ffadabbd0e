"""Dynamic toolsets: a small core is listed, and the agent turns toolsets on and off.

With ``DOIGET_TOOLSETS=dynamic`` the server lists the core (finding, fetching and citing
a paper) plus ``doiget_toolsets``; each toolset the agent enables adds its tools, and
every change is announced with ``notifications/tools/list_changed``. What is on belongs
to one MCP connection: stdio has one, and over HTTP each session has its own, so one
session's choice never changes another's list. Tools keep their names and contracts;
only what is listed, and so callable, changes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final, Literal

from doiget.contract import Request
from doiget.errors import DoigetError, ErrorCode
from doiget.papers.contracts import PapersModel, PapersReply
from doiget.server.toolset import Hints, Tool, ToolCall, describe

NAME: Final = "doiget_toolsets"
# What an agent needs first: find a paper by its reference or by topic, fetch it, find
# it again among the stored ones, and cite it. Everything else is a toolset away.
CORE: Final = (
    "doiget_resolve_paper",
    "search_semantic_scholar",
    "doiget_fetch_paper",
    "doiget_search_local",
    "doiget_format_references",
)
SUMMARIES: Final = {
    "papers": "Resolve, fetch, add, read, verify, audit and cite papers; the local store.",
    "scholar": "Search and look up arXiv, Semantic Scholar and PubMed; their BibTeX.",
    "library": "Index stored papers into projects; search their passages by meaning.",
    "web": "Web and patent search, page reading, multi-step research sessions.",
    "zotero": "Search and add to the researcher's Zotero library; sync it into doiget.",
}
INSTRUCTIONS: Final = (
    "Only a core of tools is listed: call doiget_toolsets to list the toolsets and "
    "enable the one a task needs; its tools are then listed."
)
# Changes only what this connection lists (no stored data): a reader may call it.
SWITCHES: Final = Hints(read_only=True, destructive=False, idempotent=True, open_world=False)
DESCRIPTION: Final = describe(
    when="A task needs tools not listed: search scholar sources, the web, passages of "
    "indexed papers, Zotero, verifying or reading papers.",
    inputs="action: list, enable or disable; toolset (with enable or disable).",
    outputs="toolsets[]: name, summary, enabled, off (why it cannot be enabled); changed.",
    costs="None.",
    side_effects="Changes this session's tool list and sends tools/list_changed.",
    limits="The core tools stay listed.",
)

ToolsetName = Literal["papers", "scholar", "library", "web", "zotero"]


class ToolsetsRequest(Request):
    """What to do: list the toolsets, or turn one on or off."""

    action: Literal["list", "enable", "disable"] = "list"
    toolset: ToolsetName | None = None


class ToolsetState(PapersModel):
    """One toolset as this session sees it; ``off`` says why this install cannot serve it."""

    name: str
    summary: str
    enabled: bool
    off: str | None = None


class ToolsetsReply(PapersReply):
    """The toolsets after the call, and whether the tool list changed."""

    toolsets: list[ToolsetState]
    changed: bool


@dataclass
class Switches:
    """The toolsets one connection has on, and how to tell its client the list changed."""

    enabled: set[str] = field(default_factory=set)
    announce: Callable[[], Awaitable[None]] | None = None


_switches: ContextVar[Switches] = ContextVar("doiget_switches")


@contextmanager
def switching(switches: Switches) -> Iterator[None]:
    """Serve what runs inside for the connection ``switches`` belong to."""
    token = _switches.set(switches)
    try:
        yield
    finally:
        _switches.reset(token)


class DynamicToolsets:
    """Which tools a connection sees, and the ``doiget_toolsets`` tool that changes it.

    ``owners`` maps each tool of the servable toolsets to its toolset; ``off`` says why
    each other known toolset cannot be served here.
    """

    def __init__(self, owners: Mapping[str, str], off: Mapping[str, str]) -> None:
        self.owners = dict(owners)
        self.off = dict(off)
        self.tool = Tool(NAME, DESCRIPTION, ToolsetsRequest, ToolsetsReply, SWITCHES, self._run)

    def listed(self, tool: str, enabled: set[str]) -> bool:
        """Whether ``tool`` is listed (and callable) with ``enabled`` on."""
        return tool == NAME or tool in CORE or self.owners.get(tool) in enabled

    def refusal(self, tool: str) -> DoigetError:
        """The error of a call to ``tool`` while its toolset is off."""
        return DoigetError(
            ErrorCode.CAPABILITY_DENIED,
            f"{tool} is in the {self.owners[tool]} toolset, which is not enabled: call "
            f"{NAME} with action=enable and toolset={self.owners[tool]}, then call it again.",
        )

    async def _run(self, request: ToolsetsRequest, call: ToolCall) -> ToolsetsReply:
        switches = _switches.get()
        name = request.toolset
        if request.action == "list":
            return self._reply(switches.enabled, changed=False)
        if name is None:
            raise DoigetError(
                ErrorCode.INVALID_REF,
                f"action={request.action} needs a toolset: one of {', '.join(SUMMARIES)}.",
            )
        if request.action == "enable" and name in self.off:
            raise DoigetError(
                ErrorCode.CAPABILITY_DENIED,
                f"the {name} toolset cannot be enabled: it {self.off[name]}.",
            )
        before = set(switches.enabled)
        if request.action == "enable":
            switches.enabled.add(name)
        else:
            switches.enabled.discard(name)
        changed = switches.enabled != before
        if changed and switches.announce is not None:
            await switches.announce()
        return self._reply(switches.enabled, changed=changed)

    def _reply(self, enabled: set[str], *, changed: bool) -> ToolsetsReply:
        states = [
            ToolsetState(name=name, summary=summary, enabled=False, off=self.off[name])
            if name in self.off
            else ToolsetState(name=name, summary=summary, enabled=name in enabled)
            for name, summary in SUMMARIES.items()
        ]
        return ToolsetsReply(ok=True, toolsets=states, changed=changed)
