"""What the tool listing costs an agent: the generated page is current, every tool stays
within its byte budget."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import BaseModel

from doiget.contract import parse
from doiget.errors import DoigetError, ErrorCode
from doiget.library.contracts import IndexPapers
from doiget.papers.contracts import PaperExportArgs
from doiget.server.snapshot import listed_text, stored
from doiget.web import requests as rq

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "tool_surface.py"
# Bytes of the compact JSON object of name, description and inputSchema: the most any
# tool may cost, and the most a tool costs on average.
TOOL_LIMIT = 1300
MEAN_LIMIT = 800
# Tools held to a tighter limit, one by one.
TIGHT_LIMIT = 900
TIGHT = (
    "doiget_verify_references",
    "doiget_check_claims",
    "doiget_audit_manuscript",
    "doiget_read_paper",
    "doiget_check_quote",
    "doiget_add_pdf",
    "doiget_import_bibliography",
    "doiget_zotero_search",
    "doiget_zotero_add",
)


def _sizes() -> dict[str, int]:
    return {
        entry["name"]: len(listed_text(entry).encode())
        for toolset in stored().values()
        for entry in toolset["tools"]
    }


def _benchmark() -> ModuleType:
    pytest.importorskip("bpe_openai")
    spec = importlib.util.spec_from_file_location("tool_surface", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # the dataclasses in it look themselves up
    spec.loader.exec_module(module)
    return module


def test_no_tool_costs_more_than_its_limit() -> None:
    sizes = _sizes()
    assert {name: size for name, size in sizes.items() if size > TOOL_LIMIT} == {}
    assert {name: sizes[name] for name in TIGHT if sizes[name] > TIGHT_LIMIT} == {}


def test_the_mean_tool_stays_within_its_limit() -> None:
    sizes = _sizes()
    assert sum(sizes.values()) / len(sizes) <= MEAN_LIMIT


def test_the_cost_page_is_current() -> None:
    tool_surface = _benchmark()
    assert tool_surface.PAGE.read_text(encoding="utf-8") == tool_surface.render(
        tool_surface.costs(stored())
    ), "docs/reference/tool-costs.md is stale: run python benchmarks/tool_surface.py --write"


def test_the_page_counts_every_tool_and_agrees_with_the_budget_measure() -> None:
    tool_surface = _benchmark()
    table = tool_surface.costs(stored())
    counted = {cost.name: cost.size for rows in table.values() for cost in rows}
    assert counted == _sizes()
    page = tool_surface.render(table)
    assert all(f"| `{name}` | {size} |" in page for name, size in counted.items())
    assert all(0 < cost.tokens < cost.size for rows in table.values() for cost in rows)


# Shorter schemas, the same checks: what each input refused before it still refuses,
# with a message in words; what it took, it still takes.
_SID = "s" * 100
REFUSED = [
    (rq.WebSearchRequest, {"query": "q", "sessionId": _SID + "s"}, "sessionId"),
    (rq.WebSearchRequest, {"query": "q", "sessionId": ""}, "sessionId"),
    (rq.WebSearchRequest, {"query": "q", "sessionId": "a b"}, "sessionId"),
    (rq.ResearchSessionRequest, {"sessionId": "x/../y"}, "sessionId"),
    (rq.WebSearchRequest, {"query": "q", "site": "nature.com/x"}, "site"),
    (rq.WebSearchRequest, {"query": "q", "site": "nature..com"}, "site"),
    (rq.WebSearchRequest, {"query": "q", "site": ".nature.com"}, "site"),
    (rq.WebSearchRequest, {"query": "q", "site": "nature.com OR x"}, "site"),
    (rq.WebSearchRequest, {"query": "q", "site": "x" * 254}, "site"),
    (rq.WebSearchRequest, {"query": "q", "language": "EN"}, "language"),
    (rq.WebSearchRequest, {"query": "q", "claim": ""}, "claim"),
    (rq.PatentSearchRequest, {"query": "q", "year_from": 1789}, "year_from"),
    (rq.PatentSearchRequest, {"query": "q", "search_type": "wide"}, "search_type"),
    (rq.AcademicSearchRequest, {"query": "q", "sort_by": "age"}, "sort_by"),
    (
        rq.ResearchStepRequest,
        {"searchStep": "", "stepNumber": 1, "nextStepNeeded": True},
        "searchStep",
    ),
    (IndexPapers, {"refs": ["10.1/x"], "project": ""}, "project"),
    # the short description names three forms; a refusal lists them all
    (PaperExportArgs, {"refs": ["not a ref"]}, "'https://doi.org/'"),
]
TAKEN = [
    (rq.WebSearchRequest, {"query": "q", "sessionId": _SID, "site": "sub.nature.com"}),
    (rq.WebSearchRequest, {"query": "q", "site": "x" * 253, "lens": "academic"}),
    (rq.PatentSearchRequest, {"assignee": "Acme", "year_to": 2100, "search_type": "landscape"}),
    (PaperExportArgs, {"refs": ["doi:10.1234/abc", "https://doi.org/10.1234/abc", "2401.12345v2"]}),
]


@pytest.mark.parametrize(("model", "arguments", "said"), REFUSED)
def test_what_an_input_refused_it_still_refuses(
    model: type[BaseModel], arguments: dict[str, object], said: str
) -> None:
    with pytest.raises(DoigetError) as refused:
        parse(model, arguments)
    assert refused.value.code is ErrorCode.INVALID_REF
    assert said in refused.value.message and "^" not in refused.value.message


@pytest.mark.parametrize(("model", "arguments"), TAKEN)
def test_what_an_input_took_it_still_takes(
    model: type[BaseModel], arguments: dict[str, object]
) -> None:
    parse(model, arguments)
