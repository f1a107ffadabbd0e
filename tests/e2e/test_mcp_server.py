"""doiget serve over stdio, driven by the official MCP client, upstreams replayed."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from mcputil import PAPERS_TOOLS, call, mcp_session

from doiget.papers.provenance import read_rows
from logcheck import verify_env
from pacing import unpaced_env

from papersutil import NATURE, STUB_PDF, route_nature
from replay import ReplayUpstream

SECTIONS = ("WHEN TO USE:", "INPUTS:", "OUTPUTS:", "COSTS:", "SIDE EFFECTS:", "LIMITS:")
# The spec's ref pattern is a subset of what the tools take (every form the command
# line reads), so the schema carries the forms in words, and the length cap.
REF_FORMS = "'hep-th/9901001')"
DRY_RUN_TOOLS = {"doiget_fetch_paper", "doiget_metadata_only", "doiget_batch_fetch"}
ARXIV = "1605.08386"


def route_arxiv(upstream: ReplayUpstream) -> bytes:
    upstream.fixture("export.arxiv.org", "/api/query", "arxiv/id_list-1605.08386.atom")
    return upstream.fixture("arxiv.org", "/pdf/1605.08386v1", STUB_PDF)


async def test_tools_list_is_the_papers_toolset_exactly_as_specified(
    doiget_env: dict[str, str],
) -> None:
    async with mcp_session(doiget_env) as session:
        tools = (await session.list_tools()).tools
        init_names = {tool.name for tool in tools}
    assert init_names == PAPERS_TOOLS
    excluded = {
        "doiget_delete_paper",
        "doiget_set_credentials",
        "doiget_run_shell",
        "doiget_fetch_url",
    }
    assert not init_names & excluded
    for tool in tools:
        description = tool.description or ""
        positions = [description.find(section) for section in SECTIONS]
        assert all(p >= 0 for p in positions) and positions == sorted(positions), tool.name
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        for name, prop in schema["properties"].items():
            if name == "ref":
                assert prop["type"] == "string" and prop["maxLength"] == 256
                assert "pattern" not in prop and REF_FORMS in prop["description"]
            if name == "refs":
                items = prop["items"]
                assert items["type"] == "string" and "pattern" not in items
                assert REF_FORMS in items["description"] and prop["maxItems"] == 100
        assert ("dry_run" in schema["properties"]) == (tool.name in DRY_RUN_TOOLS)
        assert tool.output_schema and tool.output_schema["type"] == "object"
        hints = tool.annotations
        assert hints is not None and hints.read_only_hint is not None
        assert hints.destructive_hint is False
    read_only = {
        tool.name for tool in tools if tool.annotations and tool.annotations.read_only_hint
    }
    assert "doiget_fetch_paper" not in read_only and "doiget_info" in read_only


async def test_every_tool_works_end_to_end(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    arxiv_pdf = route_arxiv(upstream)
    nature_pdf = route_nature(upstream)
    upstream.fixture(
        "api.openalex.org", f"/works/doi:{NATURE}", "openalex/works-W2741809807-2026.json"
    )
    upstream.fixture(
        "api.openalex.org", "/works", "openalex/works-filter-cites-W2741809807-page1-per50.json"
    )
    env = unpaced_env({**doiget_env, "DOIGET_ENABLE_OPENALEX": "1"})  # arXiv twice
    async with mcp_session(env) as session:
        profile = await call(session, "doiget_capability_profile")
        health = await call(session, "doiget_health")
        fetched_arxiv = await call(session, "doiget_fetch_paper", {"ref": ARXIV})
        fetched_doi = await call(session, "doiget_fetch_paper", {"ref": NATURE})
        resolved = await call(session, "doiget_resolve_paper", {"ref": NATURE})
        metadata = await call(session, "doiget_metadata_only", {"ref": NATURE})
        batch = await call(session, "doiget_batch_fetch", {"refs": [NATURE, ARXIV]})
        info = await call(session, "doiget_info", {"ref": ARXIV})
        located = await call(session, "doiget_paper_pdf_path", {"ref": NATURE})
        found = await call(session, "doiget_search_local", {"query": "thermometry"})
        recent = await call(session, "doiget_list_recent", {"limit": 5})
        bib = await call(session, "doiget_bibtex_export", {"refs": [NATURE, ARXIV]})
        csl = await call(session, "doiget_csl_export", {"refs": [ARXIV]})
        cited = await call(
            session, "doiget_format_references", {"refs": [NATURE, ARXIV], "style": "ieee"}
        )
        as_ris = await call(session, "doiget_format_references", {"refs": [NATURE], "style": "ris"})
        graph = await call(
            session, "doiget_expand_citation_graph", {"ref": NATURE, "direction": "citations"}
        )
        resources = (await session.list_resources()).resources
        key = "doi_10.1038_nature12373"
        as_json = await session.read_resource(f"doiget://paper/{key}")
        as_pdf = await session.read_resource(f"doiget://paper/{key}/pdf")
    assert profile["ok"] and profile["metadata_sources"] == ["openalex"]
    assert profile["rate_limit_per_sec"] == 5.0
    assert health["ok"] and health["toolsets"] == ["papers"]
    assert Path(fetched_arxiv["path"]).read_bytes() == arxiv_pdf
    assert fetched_arxiv["source"] == "arxiv" and fetched_arxiv["resolver_profile"] == "arxiv"
    assert Path(fetched_doi["path"]).read_bytes() == nature_pdf
    assert resolved["metadata"]["title"] == "Nanometre-scale thermometry in a living cell"
    assert metadata["oa_url"] and metadata["ok"]
    assert batch["summary"] == {"total": 2, "ok": 2, "failed": 0}
    assert info["metadata"]["title"] == "Heat-bath random walks with Markov bases"
    assert located["path"] == fetched_doi["path"]
    assert found["results"][0]["ref"] == NATURE
    assert recent["count"] == 2
    assert "@article{kucsko2013nanometre," in bib["bibtex"] and "stanley2016heat" in bib["bibtex"]
    assert csl["items"][0]["number"] == "arXiv:1605.08386v1"
    assert [row["citation"] for row in cited["references"]] == ["[1]", "[2]"]
    assert cited["references"][0]["entry"].startswith("[1] G. Kucsko et al.,")
    assert cited["citation"] == "[1], [2]"
    assert as_ris["text"].startswith("TY  - JOUR")
    assert graph["count"] == 21 and graph["truncated"] is True
    uris = {str(resource.uri) for resource in resources}
    assert {f"doiget://paper/{key}", f"doiget://paper/{key}/pdf"} <= uris
    document = json.loads(as_json.contents[0].text)  # type: ignore[union-attr]
    assert document["metadata"]["doi"] == NATURE
    blob = as_pdf.contents[0]
    assert blob.mime_type == "application/pdf"
    assert base64.b64decode(blob.blob) == nature_pdf  # type: ignore[union-attr]
    assert verify_env(env).ok


BAD_INPUTS: list[tuple[str, Any]] = [
    ("doiget_fetch_paper", {}),
    ("doiget_fetch_paper", {"ref": 10.1}),
    ("doiget_fetch_paper", {"ref": NATURE, "extra": 1}),
    ("doiget_fetch_paper", {"ref": "10.1234/" + "a" * 249}),
    ("doiget_fetch_paper", {"ref": "10.1234/abc; rm -rf /"}),
    ("doiget_fetch_paper", {"ref": "../../etc/passwd"}),
    ("doiget_fetch_paper", {"ref": "10.1234/ab\u202ecd"}),
    ("doiget_fetch_paper", {"ref": NATURE, "dry_run": "yes"}),
    ("doiget_metadata_only", {"ref": None}),
    ("doiget_resolve_paper", {"ref": NATURE, "dry_run": True}),
    ("doiget_batch_fetch", {"refs": [NATURE] * 101}),
    ("doiget_batch_fetch", {"refs": []}),
    ("doiget_batch_fetch", {"refs": NATURE}),
    ("doiget_info", {"ref": NATURE, "dry_run": False}),
    ("doiget_search_local", {"query": ""}),
    ("doiget_search_local", {"query": "x", "limit": 0}),
    ("doiget_list_recent", {"limit": "5"}),
    ("doiget_list_recent", {"dry_run": True}),
    ("doiget_paper_pdf_path", {"ref": "2401.1"}),
    ("doiget_capability_profile", {"dry_run": True}),
    ("doiget_health", {"verbose": True}),
    ("doiget_expand_citation_graph", {"ref": NATURE, "depth": 4}),
    ("doiget_expand_citation_graph", {"ref": NATURE, "direction": "sideways"}),
    ("doiget_bibtex_export", {"refs": ["not a ref"]}),
    ("doiget_csl_export", {}),
    ("doiget_format_references", {"refs": [NATURE], "style": "no-such-style"}),
    ("doiget_format_references", {"refs": [NATURE], "format": "pdf"}),
    ("doiget_verify_references", {"references": [3]}),
    ("doiget_check_claims", {"items": []}),
    ("doiget_check_claims", {"items": [{"claim": " ", "ref": NATURE}]}),
    ("doiget_check_claims", {"items": [{"claim": "x", "ref": [NATURE] * 11}]}),
    ("doiget_check_claims", {"items": [{"claim": "\ufdfa" * 2000, "text": "A source."}]}),
    ("doiget_check_claims", {"items": [{"claim": "x", "ref": [NATURE] * 10}] * 11}),
    ("doiget_import_bibliography", {"text": ""}),
    ("doiget_import_bibliography", {"text": "@article{k, title={T}}", "format": "endnote"}),
    ("doiget_import_bibliography", {"text": "Vaswani A. Attention is all you need. 2017."}),
    ("doiget_add_pdf", {}),
    ("doiget_add_pdf", {"paths": []}),
    ("doiget_add_pdf", {"paths": ["a.pdf"], "extra": 1}),
    ("doiget_read_paper", {"ref": NATURE, "pages": "two"}),
    ("doiget_read_paper", {"ref": NATURE, "max_chars": 10}),
    ("doiget_read_paper", {"ref": "not a ref"}),
    ("doiget_check_quote", {"ref": NATURE}),
    ("doiget_check_quote", {"quote": "x", "ref": NATURE, "project": "doiget/papers"}),
    ("doiget_audit_manuscript", {}),
    ("doiget_audit_manuscript", {"path": "draft.tex", "text": "A claim [1]."}),
    ("doiget_audit_manuscript", {"path": "draft.tex", "bibliography": "@article{k, title={T}}"}),
    ("doiget_audit_manuscript", {"text": "A claim [1].", "format": "docx"}),
    ("doiget_audit_manuscript", {"path": "draft.tex", "fetch": "yes"}),
    ("doiget_audit_manuscript", {"path": "dra\x00ft.tex"}),
]


async def test_bad_input_for_every_tool_is_an_invalid_ref_envelope(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    async with mcp_session(doiget_env) as session:
        for tool, arguments in BAD_INPUTS:
            result = await call(session, tool, arguments)
            assert result["ok"] is False, (tool, arguments)
            assert result["error"]["code"] == "INVALID_REF", (tool, arguments, result)
            assert result["error"]["message"]
        assert {tool for tool, _ in BAD_INPUTS} == PAPERS_TOOLS
        still = await call(session, "doiget_health")
    assert still["ok"] is True
    assert upstream.requests == []


async def test_denial_context_absent_present_and_null_as_specified(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.fixture("api.unpaywall.org", f"/v2/{NATURE}", "unpaywall/v2-10.1038_nature12373.json")
    upstream.json("api.crossref.org", f"/works/{NATURE}", {"status": "ok"})  # drifted answer
    # The best location's host is off the allowlist; the other two redirect off it.
    upstream.redirect("europepmc.org", "/articles/pmc4221854", "https://evil.example/paper.pdf")
    upstream.redirect("arxiv.org", "/pdf/1304.1068", "https://evil.example/paper.pdf")
    async with mcp_session(doiget_env) as session:
        missing = await call(session, "doiget_info", {"ref": NATURE})
        denied = await call(session, "doiget_fetch_paper", {"ref": NATURE})
        batch = await call(session, "doiget_batch_fetch", {"refs": [NATURE, "10.1000/unknown"]})
    assert missing["error"]["code"] == "NOT_FOUND" and "denial_context" not in missing["error"]
    assert denied["error"]["code"] == "CAPABILITY_DENIED"
    assert denied["error"]["denial_context"]["reason"] == "redirect_not_in_allowlist"
    assert denied["error"]["denial_context"]["attempted"] == "dash.harvard.edu"
    assert "evil.example" in denied["error"]["message"]
    assert upstream.requests_to("evil.example") == []
    rows = batch["results"]
    assert all("denial_context" in row["error"] for row in rows)
    assert rows[0]["error"]["denial_context"]["reason"] == "redirect_not_in_allowlist"
    assert rows[1]["error"]["denial_context"] is None


async def test_dry_runs_touch_nothing(upstream: ReplayUpstream, doiget_env: dict[str, str]) -> None:
    async with mcp_session(doiget_env) as session:
        fetch_plan = await call(session, "doiget_fetch_paper", {"ref": NATURE, "dry_run": True})
        meta_plan = await call(session, "doiget_metadata_only", {"ref": ARXIV, "dry_run": True})
        batch_plan = await call(
            session, "doiget_batch_fetch", {"refs": [NATURE, ARXIV], "dry_run": True}
        )
    assert set(fetch_plan) == {"ok", "dry_run", "ref", "plan", "rate_limit_budget"}
    assert fetch_plan["ref"] == {"doi": NATURE}
    assert fetch_plan["rate_limit_budget"] == {"global_per_sec": 5.0, "per_source_min_gap_ms": 200}
    plan = fetch_plan["plan"]
    assert plan["metadata_sources"] == ["crossref", "unpaywall"]
    assert plan["candidate_hosts_are_upper_bound"] is True
    assert plan["would_append_provenance"] is True
    assert plan["target_pdf_path"].endswith("doi_10.1038_nature12373.pdf")
    assert meta_plan["plan"]["pdf_sources"] == [] and meta_plan["plan"]["target_pdf_path"] is None
    assert meta_plan["plan"]["metadata_sources"] == ["arxiv"]
    assert [row["ref"] for row in batch_plan["results"]] == [{"doi": NATURE}, {"arxiv": ARXIV}]
    assert upstream.requests == []
    assert not Path(doiget_env["DOIGET_STORE_ROOT"]).exists() or not any(
        Path(doiget_env["DOIGET_STORE_ROOT"]).rglob("*.toml")
    )
    log = Path(doiget_env["DOIGET_LOG_PATH"])
    assert not log.exists() or not [
        r for r in read_rows(log) if not r["event"].startswith("session_")
    ]


async def test_batch_sends_one_progress_notification_per_ref(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)
    route_arxiv(upstream)
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with mcp_session(doiget_env) as session:
        result = await session.call_tool(
            "doiget_batch_fetch", {"refs": [NATURE, ARXIV]}, progress_callback=on_progress
        )
    assert result.structured_content and result.structured_content["summary"]["ok"] == 2
    assert sorted(p for p, _, _ in seen) == [1.0, 2.0]
    assert all(total == 2.0 for _, total, _ in seen)
    assert {message.split(":")[0] for _, _, message in seen if message} == {NATURE, ARXIV}
