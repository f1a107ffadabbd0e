"""The citation graph over OpenAlex: real recorded citations, caps, visited set, gating."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from doiget.contract import plain
from doiget.errors import DenialReason, DoigetError, ErrorCode
from doiget.papers import contracts as c
from doiget.papers.graph import MAX_TOTAL, PER_PAPER

from papersutil import make_papers
from replay import FIXTURES, ReplayUpstream, Reply

PEERJ = "10.7717/peerj.4375"
TEMPLATE = json.loads((FIXTURES / "openalex/works-doi-10.1073_pnas.1414271111.json").read_text())


def synthetic_work(number: int, references: list[int]) -> dict[str, Any]:
    """A real recorded OpenAlex work with its id, DOI, title and references replaced."""
    work = copy.deepcopy(TEMPLATE)
    work.update(
        id=f"https://openalex.org/W{number}",
        doi=f"https://doi.org/10.1000/w{number}",
        title=f"Work {number}",
        display_name=f"Work {number}",
        referenced_works=[f"https://openalex.org/W{ref}" for ref in references],
        cited_by_count=0,
    )
    return work


def serve_graph(upstream: ReplayUpstream, graph: dict[int, list[int]]) -> None:
    """Answer OpenAlex for a made-up graph: ``{work: [works it cites]}``."""
    works = {number: synthetic_work(number, refs) for number, refs in graph.items()}

    def answer(query: dict[str, str]) -> Reply:
        kind, _, value = query["filter"].partition(":")
        if kind == "openalex":
            wanted = [int(item[1:]) for item in value.split("|")]
            results = [works[number] for number in wanted if number in works]
        else:
            cited = int(value[1:])
            results = [works[n] for n, refs in graph.items() if cited in refs]
        results = results[: int(query["per_page"])]
        body = json.dumps({"meta": {"count": len(results)}, "results": results}).encode()
        return Reply(200, body, {"Content-Type": "application/json"})

    upstream.responder("api.openalex.org", "/works", answer)
    root = min(graph)
    upstream.json("api.openalex.org", f"/works/doi:10.1000/w{root}", works[root])


def openalex_env(env: dict[str, str]) -> dict[str, str]:
    return {**env, "DOIGET_ENABLE_OPENALEX": "1"}


async def test_real_citations_of_a_work_are_capped_per_paper(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.fixture(
        "api.openalex.org", f"/works/doi:{PEERJ}", "openalex/works-W2741809807-2026.json"
    )
    upstream.fixture(
        "api.openalex.org", "/works", "openalex/works-filter-cites-W2741809807-page1-per50.json"
    )
    papers = make_papers(openalex_env(doiget_env))
    try:
        graph = plain(
            await papers.graph(c.CitationGraph(ref=PEERJ, depth=1, direction="citations"))
        )
    finally:
        await papers.aclose()
    assert graph["root"]["id"] == "W2741809807"
    assert graph["count"] == 1 + PER_PAPER
    assert all(edge["cited"] == "W2741809807" for edge in graph["edges"])
    assert len(graph["edges"]) == PER_PAPER
    assert graph["truncated"] is True
    (request,) = [r for r in upstream.requests_to("api.openalex.org") if r.path == "/works"]
    assert request.query["filter"] == "cites:W2741809807"


async def test_bfs_visits_each_work_once_and_records_every_edge(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    # 1 cites 2 and 3; 2 cites 3 and 1 (a cycle); 3 cites 4.
    serve_graph(upstream, {1: [2, 3], 2: [3, 1], 3: [4], 4: []})
    papers = make_papers(openalex_env(doiget_env))
    try:
        graph = plain(await papers.graph(c.CitationGraph(ref="10.1000/w1", depth=3)))
    finally:
        await papers.aclose()
    assert [(node["id"], node["depth"]) for node in graph["nodes"]] == [
        ("W1", 0),
        ("W2", 1),
        ("W3", 1),
        ("W4", 2),
    ]
    edges = {(edge["citing"], edge["cited"]) for edge in graph["edges"]}
    assert edges == {("W1", "W2"), ("W1", "W3"), ("W2", "W3"), ("W2", "W1"), ("W3", "W4")}
    assert len(graph["edges"]) == len(edges)
    assert graph["truncated"] is False


async def test_total_cap_stops_the_walk_and_flags_truncation(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    # Every work cites 20 fresh ones: depth 2 would reach 421 works.
    graph_spec = {1: list(range(2, 22))}
    for parent in range(2, 22):
        first = 100 + (parent - 2) * 20
        graph_spec[parent] = list(range(first, first + 20))
        graph_spec.update({leaf: [] for leaf in graph_spec[parent]})
    serve_graph(upstream, graph_spec)
    papers = make_papers(openalex_env(doiget_env))
    try:
        graph = plain(await papers.graph(c.CitationGraph(ref="10.1000/w1", depth=2)))
    finally:
        await papers.aclose()
    assert graph["count"] == MAX_TOTAL
    assert graph["truncated"] is True
    assert len({node["id"] for node in graph["nodes"]}) == MAX_TOTAL
    # Once full, no more works are asked for.
    listed = [r for r in upstream.requests_to("api.openalex.org") if r.path == "/works"]
    assert len(listed) <= 1 + (MAX_TOTAL - 1 - PER_PAPER) // PER_PAPER + 1


async def test_graph_needs_openalex_and_checks_its_arguments_before_any_request(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    papers = make_papers(doiget_env)
    try:
        with pytest.raises(DoigetError) as off:
            await papers.graph(c.CitationGraph(ref=PEERJ))
    finally:
        await papers.aclose()
    assert off.value.code is ErrorCode.CAPABILITY_DENIED
    assert off.value.denial and off.value.denial.reason is DenialReason.CAPABILITY_NOT_GRANTED
    assert "DOIGET_ENABLE_OPENALEX" in off.value.message
    papers = make_papers(openalex_env(doiget_env))
    try:
        for depth, direction in ((0, "references"), (4, "references"), (1, "sideways")):
            with pytest.raises(DoigetError) as bad:
                await papers.graph(c.CitationGraph(ref=PEERJ, depth=depth, direction=direction))
            assert bad.value.code is ErrorCode.INVALID_REF
    finally:
        await papers.aclose()
    assert upstream.requests == []
