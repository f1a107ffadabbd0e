"""Routes for the verification tests: DBLP's real record of one NeurIPS paper."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio

from doiget.net.network import Network
from doiget.runtime import load_runtime
from doiget.verify.contracts import Row
from doiget.verify.inputs import read_items
from doiget.verify.lookup import AnswerStore
from doiget.verify.service import Verifier

from netutil import FAST_RETRY
from replay import FIXTURES, ReplayUpstream, Reply

HITS = json.loads(
    (FIXTURES / "dblp/search-publ-q-chain-of-thought-prompting-h5-hitlist.json").read_text()
)
AUTHORS = (
    "Jason Wei and Xuezhi Wang and Dale Schuurmans and Maarten Bosma and Brian Ichter and "
    "Fei Xia and Ed H. Chi and Quoc V. Le and Denny Zhou"
)
TITLE = "Chain-of-Thought Prompting Elicits Reasoning in Large Language Models"
WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
WAKEFIELD_FIXTURE = (
    "crossref/crossref-works-10.1016_s0140-6736_97_11096-0-wakefield-updated-by-retraction.json"
)
JSON = {"Content-Type": "application/json"}


def _envelope(hits: list[dict[str, Any]]) -> bytes:
    listed: dict[str, Any] = {"@total": str(len(hits)), "@sent": str(len(hits))}
    if hits:
        listed["hit"] = hits
    return json.dumps({"result": {"status": {"@code": "200"}, "hits": listed}}).encode()


def _dblp(hits: list[dict[str, Any]]) -> Callable[[dict[str, str]], Reply]:
    def answer(query: dict[str, str]) -> Reply:
        words = query.get("q", "").lower().split()
        known = {"chain", "wei", "wang", "thought", "reasoning", "elicits"}
        return Reply(200, _envelope(hits if known & set(words) else []), JSON)

    return answer


def route_dblp_fixture(upstream: ReplayUpstream, name: str) -> None:
    """Every DBLP search answered with the recorded hit list ``dblp/<name>``; Crossref
    and arXiv searches with their recorded empty answers."""
    hits = json.loads((FIXTURES / "dblp" / name).read_text())
    upstream.route("dblp.org", "/search/publ/api", Reply(200, _envelope(hits), JSON))
    upstream.fixture(
        "api.crossref.org", "/works", "crossref/works-query.title-gibberish-zero-results.json"
    )
    upstream.fixture("export.arxiv.org", "/api/query", "arxiv/id_list-0000.0000-empty.atom")


def route_chain_of_thought(upstream: ReplayUpstream, hits: list[dict[str, Any]] = HITS) -> None:
    upstream.responder("dblp.org", "/search/publ/api", _dblp(hits))
    upstream.fixture(
        "api.crossref.org", "/works", "crossref/works-query.title-gibberish-zero-results.json"
    )
    upstream.fixture("export.arxiv.org", "/api/query", "arxiv/id_list-0000.0000-empty.atom")
    upstream.fixture("api.crossref.org", f"/works/{WAKEFIELD}", WAKEFIELD_FIXTURE)
    upstream.fixture(
        "api.crossref.org",
        "/works/10.1073/pnas.1414271111",
        "crossref/works-10.1073_pnas.1414271111.json",
    )


def bib(**fields: str) -> str:
    values = {"title": TITLE, "author": AUTHORS, "year": "2022", "booktitle": "NeurIPS"} | fields
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in values.items() if value)
    return f"@inproceedings{{ref,\n{body}\n}}"


BIB = bib()


def check(env: dict[str, str], *references: str | dict[str, Any]) -> list[Row]:
    """The rows of ``references`` verified through ``env``'s upstreams, no answer kept."""

    async def run() -> list[Row]:
        runtime = load_runtime(env)
        network = Network(runtime.settings, retry=FAST_RETRY)
        verifier = Verifier(network, AnswerStore(None))
        try:
            result = await verifier.verify_many(read_items(references))
        finally:
            await network.aclose()
        return result.results

    return anyio.run(run)
