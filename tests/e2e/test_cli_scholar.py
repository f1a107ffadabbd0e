"""``doiget scholar`` as a person or a script runs it."""

from __future__ import annotations

import json

import bibtexparser

from cliutil import doiget
from replay import ReplayUpstream
from scholarutil import (
    EFETCH,
    ESEARCH,
    EUTILS,
    S2,
    S2_CITATIONS,
    route_arxiv_search,
    route_pubmed_record,
    route_s2_pnas,
)


def test_arxiv_search_prints_the_mcp_json_or_a_table(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_arxiv_search(upstream)
    as_json = doiget(
        "scholar",
        "arxiv",
        "search",
        "testing",
        "--max",
        "10",
        "--sort",
        "submittedDate",
        "--json",
        env=doiget_env,
    )
    assert as_json.returncode == 0, as_json.stderr
    rows = json.loads(as_json.stdout)
    assert len(rows) == 10 and rows[0]["id"] == "2202.12139v1"
    assert upstream.requests_to("export.arxiv.org")[0].query["sortBy"] == "submittedDate"
    table = doiget("scholar", "arxiv", "search", "testing", "--author", "Gotlieb", env=doiget_env)
    assert table.returncode == 0, table.stderr
    assert "2202.12139v1" in table.stdout and "10 result(s)" in table.stdout
    assert "arXiv:2202.12139" in table.stdout


def test_lookup_bib_and_citations_commands(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_s2_pnas(upstream)
    route_pubmed_record(upstream)
    upstream.fixture(
        S2, S2_CITATIONS, "semanticscholar/paper-CorpusID_14514057-citations-offset0.json"
    )
    paper = doiget("--json", "scholar", "s2", "get", "10.1073/pnas.1414271111", env=doiget_env)
    assert json.loads(paper.stdout)["citationCount"] == 136
    citing = doiget(
        "scholar", "s2", "citations", "CorpusId:14514057", "-n", "2", "--json", env=doiget_env
    )
    assert [row["paperId"][:8] for row in json.loads(citing.stdout)] == ["344e7fb2", "279d374e"]
    bib = doiget("scholar", "pubmed", "bib", "27797938", env=doiget_env)
    assert bib.returncode == 0, bib.stderr
    assert bib.stdout.startswith("@article{pmid27797938,")
    assert len(bibtexparser.parse_string(bib.stdout).entries) == 1
    record = doiget("scholar", "pubmed", "get", "27797938", env=doiget_env)
    assert "Gut" in record.stdout and "10.1136/gutjnl-2016-312510" in record.stdout


def test_bad_input_and_upstream_failures_exit_with_their_status(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.fixture(EUTILS, ESEARCH, "pubmed/esearch-pubmed-biopython.xml")
    upstream.fixture(EUTILS, EFETCH, "pubmed/esummary-noargs-error.xml")
    swapped = doiget(
        "scholar", "pubmed", "search", "cancer", "--from", "2024", "--to", "2020", env=doiget_env
    )
    assert swapped.returncode == 2 and "startYear (2024) is after endYear (2020)" in swapped.stderr
    not_pmid = doiget("scholar", "pubmed", "get", "PMC123", "--json", env=doiget_env)
    assert not_pmid.returncode == 2
    # The shape search_pubmed/get_pubmed_paper return: {"error": "<class>: <what>"}.
    assert json.loads(not_pmid.stdout.splitlines()[-1])["error"].startswith("Invalid parameter")
    assert upstream.requests == []
    broken = doiget("scholar", "pubmed", "search", "cancer", env=doiget_env)
    assert broken.returncode == 1 and "Failed to parse response: " in broken.stderr
    assert broken.stdout == ""
