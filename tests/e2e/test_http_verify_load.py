"""Over HTTP, verifying references with huge author lists against a record with
thousands of authors (a collaboration paper) never stalls the server: /healthz answers
within the cheap-call bound while the calls run, and they end in seconds.

Each of 15 references (three clients, five references a call) cites the record's DOI and
title with 1,200 made-up authors; the record has 3,000. Matched author by author against
the whole list, on the event loop, this took minutes, with /healthz waiting all along.
Each row lists at most 100 of the record's names, so five rows fit in one answer
(three did not).
"""

from __future__ import annotations

import json
import random
import string
import time
from pathlib import Path

import anyio
import httpx
from httputil import TOKEN, http_server, http_session, token_file
from mcputil import call

from pacing import unpaced_env

from replay import FIXTURES, ReplayUpstream, Reply

DOI = "10.1073/pnas.1414271111"
JSON = {"Content-Type": "application/json"}
REAL_AUTHORS = 3_000
CITED_AUTHORS = 1_200
REFERENCES = 15
# Clients calling at once, five references a call: listing the record's 3,000 authors in
# each row's match, problem and corrected BibTeX and CSL, three rows outgrew the 1 MB an
# MCP client takes in one message.
CLIENTS = 3
LISTED = 100
# /healthz while the call runs, on a loaded two-core machine (about 10 ms when quiet).
HEALTH_BOUND_SECONDS = 1.0
# The whole call (a few seconds when quiet; unbounded matching took minutes).
CALL_BOUND_SECONDS = 90.0


def _names(count: int, seed: int) -> list[tuple[str, str]]:
    chosen = random.Random(seed)

    def word() -> str:
        return "".join(chosen.choices(string.ascii_lowercase, k=6)).title()

    return [(word(), word()) for _ in range(count)]


def _route(upstream: ReplayUpstream) -> str:
    record = json.loads((FIXTURES / "crossref/works-10.1073_pnas.1414271111.json").read_text())
    record["message"]["author"] = [
        {"given": given, "family": family, "sequence": "additional"}
        for given, family in _names(REAL_AUTHORS, 1)
    ]
    body = json.dumps(record).encode()
    upstream.route("api.crossref.org", f"/works/{DOI}", Reply(200, body, JSON))
    upstream.fixture(
        "api.crossref.org", "/works", "crossref/works-query.title-gibberish-zero-results.json"
    )
    upstream.json("dblp.org", "/search/publ/api", {"result": {"hits": {"@total": "0"}}})
    upstream.fixture("export.arxiv.org", "/api/query", "arxiv/id_list-0000.0000-empty.atom")
    return str(record["message"]["title"][0])


def _reference(title: str, seed: int) -> str:
    authors = " and ".join(
        f"{family}, {given[0]}." for given, family in _names(CITED_AUTHORS, seed)
    )
    fields = f"title = {{{title}}},\n  author = {{{authors}}},\n  doi = {{{DOI}}}"
    return f"@article{{ref{seed},\n  {fields}\n}}"


async def test_huge_author_lists_are_matched_without_stalling_the_server(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    title = _route(upstream)
    references = [_reference(title, seed) for seed in range(2, 2 + REFERENCES)]
    assert all(len(reference) < 20_000 for reference in references)
    # Every reference asks DBLP: 1 s apart, they would be most of the call's time.
    env = unpaced_env({**doiget_env, "DOIGET_HTTP_TOKENS_FILE": str(token_file(tmp_path, TOKEN))})
    with http_server(env, tmp_path) as server:
        async with http_session(server.url) as session:  # tools loaded, workers started
            await call(session, "doiget_verify_references", {"references": ["A. B. Warm. 2020."]})
        waits: list[float] = []
        results: list[dict[str, object]] = []
        began = time.monotonic()

        async def verify(part: list[str]) -> None:
            async with http_session(server.url) as session:
                arguments = {"references": part}
                results.append(await call(session, "doiget_verify_references", arguments))

        async with anyio.create_task_group() as group, httpx.AsyncClient() as client:
            for client_index in range(CLIENTS):
                group.start_soon(verify, references[client_index::CLIENTS])
            while len(results) < CLIENTS and time.monotonic() - began < CALL_BOUND_SECONDS:
                asked = time.monotonic()
                answer = await client.get(f"{server.base}/healthz", timeout=30)
                waits.append(time.monotonic() - asked)
                assert answer.status_code == 200
                await anyio.sleep(0.05)
            took = time.monotonic() - began
            group.cancel_scope.cancel()
    assert len(results) == CLIENTS, f"{len(results)} calls had ended after {took:.0f} s"
    rows = [row for result in results for row in result["results"]]  # type: ignore[attr-defined]
    assert len(rows) == REFERENCES
    assert all(row["verdict"] == "miscited" for row in rows), rows[0]
    assert all(row["problems"][0]["kind"] == "authors_replaced" for row in rows)
    for row in rows:
        assert len(row["match"]["authors"]) == LISTED
        assert row["match"]["authors_total"] == REAL_AUTHORS
        assert row["problems"][0]["actual"].endswith(f"; and {REAL_AUTHORS - LISTED} more")
        listed = row["corrected"]["bibtex"].split("author = {", 1)[1].split("},", 1)[0]
        assert listed.split(" and ")[LISTED:] == ["others"]
        assert len(row["corrected"]["csl"]["author"]) == LISTED
    print(f"call {took:.1f} s; /healthz {len(waits)} probes, slowest {max(waits) * 1000:.0f} ms")
    assert max(waits) < HEALTH_BOUND_SECONDS, sorted(waits)[-5:]
