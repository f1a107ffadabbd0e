"""Citation graph: breadth-first expansion over OpenAlex, within hard caps.

From a root work, each level follows the works it references (``references``), the
works that cite it (``citations``) or both. At most :data:`PER_PAPER` neighbours are
taken from any one work, at most :data:`MAX_TOTAL` nodes in all, and at most
:data:`MAX_DEPTH` levels; ``truncated`` says whether a cap left anything out. Each
work is visited once, so cycles and shared references cost nothing extra.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from doiget.capability import CapabilityProfile
from doiget.errors import DenialReason, DoigetError, ErrorCode, denied, quoted
from doiget.models import Work
from doiget.net.client import SourceClient
from doiget.sources import openalex

MAX_DEPTH: Final = 3
MAX_TOTAL: Final = 100
PER_PAPER: Final = 20

Direction = Literal["references", "citations", "both"]
DIRECTIONS: Final = ("references", "citations", "both")


@dataclass(frozen=True, slots=True)
class GraphNode:
    """One work in the graph, and the level at which it was reached (root = 0)."""

    id: str
    depth: int
    doi: str | None
    title: str | None
    year: int | None
    first_author: str | None

    @classmethod
    def of(cls, work: Work, depth: int) -> GraphNode:
        """A node for an OpenAlex work (which always has an id)."""
        first = work.first_author
        return cls(
            id=work.openalex_id or "",
            depth=depth,
            doi=work.doi,
            title=work.title,
            year=work.year,
            first_author=first.display if first else None,
        )


@dataclass
class CitationGraph:
    """Nodes in BFS order and ``citing -> cited`` edges."""

    root: GraphNode
    direction: Direction
    depth: int
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The tool/CLI result shape."""
        return {
            "ok": True,
            "root": _node_dict(self.root),
            "direction": self.direction,
            "depth": self.depth,
            "count": len(self.nodes),
            "nodes": [_node_dict(node) for node in self.nodes],
            "edges": [{"citing": citing, "cited": cited} for citing, cited in self.edges],
            "truncated": self.truncated,
            "caps": {"depth": MAX_DEPTH, "total": MAX_TOTAL, "per_paper": PER_PAPER},
        }


def _node_dict(node: GraphNode) -> dict[str, Any]:
    return {
        "id": node.id,
        "depth": node.depth,
        "doi": node.doi,
        "title": node.title,
        "year": node.year,
        "first_author": node.first_author,
    }


def check_graph_request(profile: CapabilityProfile, depth: int, direction: str) -> None:
    """Refuse a graph call that the profile or the caps do not allow, before any request."""
    if not profile.metadata.openalex:
        raise denied(
            ErrorCode.CAPABILITY_DENIED,
            "the citation graph needs OpenAlex, which is off; set DOIGET_ENABLE_OPENALEX=1 "
            "(and DOIGET_EMAIL for its polite pool) and restart.",
            DenialReason.CAPABILITY_NOT_GRANTED,
            source="openalex",
        )
    if not 1 <= depth <= MAX_DEPTH:
        raise DoigetError(ErrorCode.INVALID_REF, f"depth must be 1-{MAX_DEPTH}; got {depth}.")
    if direction not in DIRECTIONS:
        raise DoigetError(
            ErrorCode.INVALID_REF,
            f"direction {quoted(direction)} is not one of {', '.join(DIRECTIONS)}.",
        )


class _Walk:
    """The state of one expansion: what has been seen and what the caps cut."""

    def __init__(self, client: SourceClient, mailto: str | None, graph: CitationGraph) -> None:
        self.client = client
        self.mailto = mailto
        self.graph = graph
        self.visited: set[str] = {graph.root.id}
        self.edges: set[tuple[str, str]] = set()

    async def references(self, work: Work) -> list[Work]:
        wanted = list(dict.fromkeys(work.referenced_ids))
        if len(wanted) > PER_PAPER:
            self.graph.truncated = True
            wanted = wanted[:PER_PAPER]
        unseen = [ref for ref in wanted if ref not in self.visited]
        found: list[Work] = []
        if unseen:
            found = await openalex.list_works(
                self.client, "openalex:" + "|".join(unseen), self.mailto, per_page=len(unseen)
            )
        for ref in wanted:
            if ref in self.visited:
                self.add_edge(work.openalex_id, ref)
        return found

    async def citations(self, work: Work) -> list[Work]:
        citing = await openalex.list_works(
            self.client, f"cites:{work.openalex_id}", self.mailto, per_page=PER_PAPER
        )
        if (work.cited_by_count or 0) > PER_PAPER or len(citing) > PER_PAPER:
            self.graph.truncated = True
        return citing[:PER_PAPER]

    def add_edge(self, citing: str | None, cited: str | None) -> None:
        if citing and cited and (citing, cited) not in self.edges:
            self.edges.add((citing, cited))
            self.graph.edges.append((citing, cited))

    def admit(self, work: Work, depth: int) -> bool:
        """Add a newly seen work as a node, unless the total cap is reached."""
        if not work.openalex_id or work.openalex_id in self.visited:
            return False
        if self.full:
            self.graph.truncated = True
            return False
        self.visited.add(work.openalex_id)
        self.graph.nodes.append(GraphNode.of(work, depth))
        return True

    def connect(self, other: Work, depth: int, edge: tuple[str | None, str | None]) -> bool:
        """Admit ``other`` and record ``edge`` if it is a node; True when it is new."""
        new = self.admit(other, depth)
        if new or other.openalex_id in self.visited:
            self.add_edge(*edge)
        return new

    @property
    def full(self) -> bool:
        return len(self.graph.nodes) >= MAX_TOTAL


async def expand_citation_graph(
    client: SourceClient,
    doi: str,
    *,
    profile: CapabilityProfile,
    mailto: str | None,
    depth: int = 1,
    direction: Direction = "references",
) -> CitationGraph:
    """The capped BFS graph around ``doi`` (the root counts towards the total)."""
    check_graph_request(profile, depth, direction)
    root_work = await openalex.get_work(client, doi, mailto)
    if not root_work.openalex_id:
        raise client.schema_drift("returned a work without an id")
    root = GraphNode.of(root_work, 0)
    graph = CitationGraph(root=root, direction=direction, depth=depth, nodes=[root])
    walk = _Walk(client, mailto, graph)
    frontier = [root_work]
    for level in range(1, depth + 1):
        reached: list[Work] = []
        for work in frontier:
            if walk.full:
                graph.truncated = True
                break
            if direction in ("references", "both"):
                for cited in await walk.references(work):
                    if walk.connect(cited, level, (work.openalex_id, cited.openalex_id)):
                        reached.append(cited)
            if direction in ("citations", "both"):
                for citing in await walk.citations(work):
                    if walk.connect(citing, level, (citing.openalex_id, work.openalex_id)):
                        reached.append(citing)
        frontier = reached
        if not frontier:
            break
    return graph
