"""References that are an identifier alone, items no reader can take, and DOIs holding
'.' or '..' path parts, through the replay upstream.

A bare DOI, arXiv id or PMID is looked up by itself and its record is the match; an item
that cannot be read is its own row's coded error and the others are checked; a DOI with
a dot path part is refused on every path before any request (an HTTP client would
resolve the dots and ask for another resource of the same host).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from verifyutil import BIB, check, route_chain_of_thought

from doiget.errors import DoigetError
from doiget.net.network import Network
from doiget.runtime import load_runtime
from doiget.sources import crossref, openalex, semantic_scholar, unpaywall

from pdfmaker import write_lines_pdf
from replay import ReplayUpstream

PNAS = "10.1073/pnas.1414271111"
DOTTED = [
    "10.1234/x/../../members/311",
    "10.1234/x/..",
    "10.1234/./members/311",
    "10.1234/x/%2e%2e/%2E%2E/members/311",
    "10.1234/x/%252e%252e/members",
    "10.1234/x/.%2e/members",
]


def _crossref_paths(upstream: ReplayUpstream) -> list[str]:
    return [request.path for request in upstream.requests_to("api.crossref.org")]


@pytest.mark.parametrize(
    "bare",
    [PNAS, PNAS.upper(), f"https://doi.org/{PNAS}", f"doi:{PNAS}", f"DOI: {PNAS}.",
     f"http://dx.doi.org/{PNAS}"],
)  # fmt: skip
def test_a_bare_doi_is_verified_by_its_record(
    bare: str, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_chain_of_thought(upstream)
    [row] = check(doiget_env, bare)
    assert row.verdict == "verified" and row.error is None, row
    assert row.match is not None and row.match.ref == PNAS


def test_identifiers_no_record_answers_and_items_with_nothing_to_look_up_get_rows(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_chain_of_thought(upstream)  # arXiv knows no id, PubMed none (not routed: 404)
    rows = check(
        doiget_env, "arXiv:1706.03762", "https://arxiv.org/abs/1706.03762", "10.1371/notarealdoi",
        "PMID: 23903748", "", "   ", "https://example.com/paper.html", "x" * 20_001, BIB,
    )  # fmt: skip
    assert [row.verdict for row in rows] == [
        "not_found", "not_found", "not_found", "not_found", "uncertain", "uncertain",
        "uncertain", "uncertain", "verified",
    ], rows  # fmt: skip
    assert [p.kind for p in rows[0].problems] == ["doi_unresolved"]
    assert rows[7].error is not None and rows[7].error.code == "INVALID_REF"
    assert all(row.error is None for index, row in enumerate(rows) if index != 7)


@pytest.mark.parametrize("doi", DOTTED)
def test_a_doi_with_dot_path_parts_is_refused_in_every_form_before_any_request(
    doi: str, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_chain_of_thought(upstream)
    rows = check(
        doiget_env,
        BIB.replace("}\n}", f"}},\n  doi = {{{doi}}}\n}}"),
        {"id": "csl", "title": "A title", "DOI": doi},
        f"Wei J. A title. NeurIPS 2022. https://doi.org/{doi}",
        f"doi:{doi}",
    )
    for row in rows:
        assert row.error is not None and row.error.code == "INVALID_REF", row
        assert "'.' or '..'" in row.error.message
    assert not any("members" in path or "10.1234" in path for path in _crossref_paths(upstream))


@pytest.mark.parametrize("doi", DOTTED)
def test_no_source_puts_a_dotted_doi_in_a_url_path(
    doi: str, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    async def run() -> None:
        network = Network(load_runtime(doiget_env).settings)
        try:
            asks = (
                lambda: crossref.get_work(network.client("crossref"), doi, None),
                lambda: unpaywall.get_record(network.client("unpaywall"), doi, "a@b.org"),
                lambda: openalex.get_work(network.client("openalex"), doi, None),
                lambda: semantic_scholar.get_paper(network.client("semantic_scholar"),
                                                   f"DOI:{doi}", None),
            )  # fmt: skip
            for ask in asks:
                with pytest.raises(DoigetError) as refused:
                    await ask()
                assert refused.value.code.value == "INVALID_REF"
        finally:
            await network.aclose()

    anyio.run(run)
    assert upstream.requests == []


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "doiget", *args, "--json"],
                          env=full, capture_output=True, text=True, timeout=120)  # fmt: skip


def test_the_command_checks_bare_identifiers_and_refuses_dotted_dois_by_row(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_chain_of_thought(upstream)
    refs = tmp_path / "refs.txt"
    paragraphs = [PNAS, f"doi:{DOTTED[0]}", "", "w " * 10_001, f"https://doi.org/{PNAS}"]
    refs.write_text("\n\n".join(paragraphs), encoding="utf-8")
    done = _cli(doiget_env, "verify", str(refs))
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["results"]
    assert [row["verdict"] for row in rows] == ["verified", "uncertain", "uncertain", "verified"]
    assert [row.get("error", {}).get("code") for row in rows] == [
        None, "INVALID_REF", "INVALID_REF", None,
    ]  # fmt: skip
    assert not any("members" in path for path in _crossref_paths(upstream))


def test_import_and_add_refuse_a_dotted_doi_without_a_request(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_chain_of_thought(upstream)
    bib = tmp_path / "refs.bib"
    bib.write_text(
        f"@article{{dots,\n  title = {{A title}},\n  doi = {{{DOTTED[0]}}}\n}}\n", encoding="utf-8"
    )
    imported = _cli(doiget_env, "import", str(bib))
    assert imported.returncode == 0, imported.stderr
    [row] = json.loads(imported.stdout)["results"]
    assert row["status"] == "uncertain" and "'.' or '..'" in row["note"], row
    pdf = write_lines_pdf(tmp_path / "paper.pdf", [["A Title Of A Paper", f"doi:{DOTTED[0]}"]])
    added = _cli(doiget_env, "add", str(pdf))
    assert added.returncode == 0, added.stderr
    [result] = json.loads(added.stdout)["results"]
    assert result["identified"] is False, result
    assert not any("members" in path for path in _crossref_paths(upstream))
