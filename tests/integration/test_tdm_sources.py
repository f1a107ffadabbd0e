"""The TDM sources through the replay upstream: each publisher's API under its grant,
only for its DOI prefixes, with its key in no output, row or file.

The publishers' answers are built here in the shapes their public API documentation
gives (Elsevier's Article Entitlement JSON, Springer Nature's Open Access JSON).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from doiget import capability
from doiget.contract import plain
from doiget.errors import DenialReason, DoigetError, ErrorCode
from doiget.papers import contracts as c
from doiget.papers.provenance import read_rows
from logcheck import verify_env

from papersutil import (
    CLOSED,
    JNS,
    LOGIN_PAGE,
    MEDIA_PDF,
    PHYSREVE,
    STUB_PDF,
    make_papers,
    read_toml,
    route_closed,
)
from replay import ReplayUpstream, Reply

KEY = "TdmKey-7f3a9c2e11d04b5e8a6f"
ELSEVIER_GRANT = {"DOIGET_AGREE_TDM_ELSEVIER": "1", "DOIGET_KEY_ELSEVIER": KEY}
APS_GRANT = {"DOIGET_AGREE_TDM_APS": "1", "DOIGET_KEY_APS": KEY}
SPRINGER_GRANT = {"DOIGET_AGREE_TDM_SPRINGER": "1", "DOIGET_KEY_SPRINGER": KEY}
ELSEVIER_PDF_PATH = f"/content/article/doi/{JNS}"
ENTITLEMENT_PATH = f"/content/article/entitlement/doi/{JNS}"
CLOSED_QUOTED = CLOSED.replace(":", "%3A")


def route_jns_closed(upstream: ReplayUpstream) -> None:
    """An Elsevier article whose Open Access link ends at a login page."""
    upstream.route("api.crossref.org", f"/works/{JNS}", Reply(503, b"down"))
    upstream.fixture(
        "api.unpaywall.org", f"/v2/{JNS}", "unpaywall/v2-10.1016_j.jns.2020.116832.json"
    )
    upstream.route("doi.org", f"/{JNS}", LOGIN_PAGE)


def entitlement(entitled: bool) -> dict[str, Any]:
    message = "Requestor is entitled" if entitled else "Requestor is not entitled"
    return {
        "entitlement-response": {
            "document-entitlement": {
                "dc:identifier": f"doi:{JNS}",
                "entitled": entitled,
                "message": message,
            }
        }
    }


def springer_answer(open_access: str = "true") -> dict[str, Any]:
    return {
        "apiMessage": "This JSON was provided by Springer Nature",
        "query": f"doi:{CLOSED}",
        "result": [{"total": "1", "start": "1", "pageLength": "10", "recordsDisplayed": "1"}],
        "records": [
            {
                "contentType": "Article",
                "identifier": f"doi:{CLOSED}",
                "openaccess": open_access,
                "url": [
                    {"format": "", "platform": "", "value": f"http://dx.doi.org/{CLOSED}"},
                    {
                        "format": "pdf",
                        "platform": "web",
                        "value": f"http://link.springer.com/content/pdf/{CLOSED_QUOTED}.pdf",
                    },
                ],
            }
        ],
    }


async def fetch(env: dict[str, str], ref: str) -> dict[str, Any]:
    papers = make_papers(env)
    try:
        return plain(await papers.fetch(c.PaperFetch(ref=ref)))
    finally:
        await papers.aclose()


def assert_key_nowhere(env: dict[str, str], *outputs: object) -> None:
    """The key is in no output given and in no file doiget wrote."""
    for output in outputs:
        assert KEY[:8].lower() not in json.dumps(output, default=str).lower()
    for root in ("DOIGET_DATA_DIR", "DOIGET_STORE_ROOT", "DOIGET_LOG_PATH"):
        base = Path(env[root])
        files = [base] if base.is_file() else [p for p in base.rglob("*") if p.is_file()]
        for path in files:
            assert KEY[:8].encode().lower() not in path.read_bytes().lower(), path


def tdm_rows(env: dict[str, str]) -> list[dict[str, Any]]:
    return [
        row
        for row in read_rows(Path(env["DOIGET_LOG_PATH"]))
        if str(row.get("source") or "").startswith("tdm-")
    ]


async def test_elsevier_grant_fetches_the_pdf_after_the_entitlement_check(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_jns_closed(upstream)
    upstream.json("api.elsevier.com", ENTITLEMENT_PATH, entitlement(True))
    served = upstream.fixture("api.elsevier.com", ELSEVIER_PDF_PATH, STUB_PDF)
    env = {**doiget_env, **ELSEVIER_GRANT}
    result = await fetch(env, JNS)
    assert result["ok"] is True
    assert (result["source"], result["resolver_profile"]) == ("tdm-elsevier", "tdm-elsevier")
    assert Path(result["path"]).read_bytes() == served
    asked = upstream.requests_to("api.elsevier.com")
    assert [r.path for r in asked] == [ENTITLEMENT_PATH, ELSEVIER_PDF_PATH]
    assert all(r.headers["x-els-apikey"] == KEY for r in asked)
    assert asked[1].headers["accept"] == "application/pdf"
    rows = tdm_rows(env)
    assert [(row["event"], row["result"], row["capability"]) for row in rows] == [
        ("fetch", "ok", "tdm"),
        ("store_write", "ok", "tdm"),
    ]
    toml = next(Path(env["DOIGET_STORE_ROOT"]).rglob("*.toml"))
    assert read_toml(toml)["doiget"]["pdf_source"] == "tdm-elsevier"
    assert verify_env(env).ok
    assert_key_nowhere(env, result)


async def test_an_entitlement_refusal_is_a_denial_and_nothing_is_downloaded(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_jns_closed(upstream)
    upstream.json("api.elsevier.com", ENTITLEMENT_PATH, entitlement(False))
    upstream.fixture("api.elsevier.com", ELSEVIER_PDF_PATH, STUB_PDF)
    env = {**doiget_env, **ELSEVIER_GRANT}
    with pytest.raises(DoigetError) as caught:
        await fetch(env, JNS)
    error = caught.value
    assert error.code is ErrorCode.CAPABILITY_DENIED
    assert "not entitled" in error.message
    assert [r.path for r in upstream.requests_to("api.elsevier.com")] == [ENTITLEMENT_PATH]
    rows = tdm_rows(env)
    assert [(row["result"], row["error_code"]) for row in rows] == [("denied", "CAPABILITY_DENIED")]
    assert not list(Path(env["DOIGET_STORE_ROOT"]).rglob("*.pdf"))
    assert_key_nowhere(env, error.message)


@pytest.mark.parametrize(
    "answer",
    [
        Reply(200, b"<full-text-retrieval-response/>", {"Content-Type": "text/xml"}),
        Reply(200, b"<html><body>Preview</body></html>", {"Content-Type": "application/pdf"}),
    ],
    ids=["xml", "html-declared-as-pdf"],
)
async def test_an_answer_that_is_not_a_pdf_is_refused_not_stored(
    upstream: ReplayUpstream, doiget_env: dict[str, str], answer: Reply
) -> None:
    route_jns_closed(upstream)
    upstream.json("api.elsevier.com", ENTITLEMENT_PATH, entitlement(True))
    upstream.route("api.elsevier.com", ELSEVIER_PDF_PATH, answer)
    env = {**doiget_env, **ELSEVIER_GRANT}
    with pytest.raises(DoigetError) as caught:
        await fetch(env, JNS)
    assert caught.value.denial is not None
    assert caught.value.denial.reason is DenialReason.CONTENT_TYPE_MISMATCH
    assert not list(Path(env["DOIGET_STORE_ROOT"]).rglob("*.pdf"))
    assert_key_nowhere(env, caught.value.message)


def route_physreve_closed(upstream: ReplayUpstream) -> None:
    """An APS article whose OA copies (publisher page, arXiv) give no PDF."""
    upstream.route("api.crossref.org", f"/works/{PHYSREVE}", Reply(503, b"down"))
    upstream.fixture(
        "api.unpaywall.org", f"/v2/{PHYSREVE}", "unpaywall/v2-10.1103_physreve.88.012814.json"
    )
    upstream.route("link.aps.org", "/accepted/10.1103/PhysRevE.88.012814", LOGIN_PAGE)
    upstream.route("arxiv.org", "/pdf/1304.0473", Reply(404, b"gone"))


async def test_aps_grant_fetches_with_a_bearer_token(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_physreve_closed(upstream)
    path = f"/v2/journals/articles/{PHYSREVE}"
    served = upstream.fixture("harvest.aps.org", path, MEDIA_PDF)
    env = {**doiget_env, **APS_GRANT}
    result = await fetch(env, PHYSREVE)
    assert result["source"] == "tdm-aps"
    assert Path(result["path"]).read_bytes() == served
    (asked,) = upstream.requests_to("harvest.aps.org")
    assert asked.path == path
    assert asked.headers["authorization"] == f"Bearer {KEY}"
    assert asked.headers["accept"] == "application/pdf"
    assert_key_nowhere(env, result)


@pytest.mark.parametrize("status", [401, 403])
async def test_aps_refusing_the_key_is_an_entitlement_denial(
    upstream: ReplayUpstream, doiget_env: dict[str, str], status: int
) -> None:
    route_physreve_closed(upstream)
    upstream.route(
        "harvest.aps.org",
        f"/v2/journals/articles/{PHYSREVE}",
        Reply(status, f'{{"error": "invalid token {KEY}"}}'.encode()),
    )
    env = {**doiget_env, **APS_GRANT}
    with pytest.raises(DoigetError) as caught:
        await fetch(env, PHYSREVE)
    assert "APS Harvest refused the key" in caught.value.message
    assert len(upstream.requests_to("harvest.aps.org")) == 1
    assert_key_nowhere(env, caught.value.message)


async def test_springer_grant_confirms_open_access_then_fetches_from_springerlink(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_closed(upstream)
    upstream.json("api.springernature.com", "/openaccess/json", springer_answer())
    served = upstream.fixture(
        "link.springer.com", f"/content/pdf/{CLOSED_QUOTED}.pdf", "pdf/openquestion-jose-paper.pdf"
    )
    env = {**doiget_env, **SPRINGER_GRANT}
    result = await fetch(env, CLOSED)
    assert result["source"] == "tdm-springer"
    assert Path(result["path"]).read_bytes() == served
    (query,) = upstream.requests_to("api.springernature.com")
    assert query.query == {"q": f"doi:{CLOSED}", "api_key": KEY}
    (download,) = upstream.requests_to("link.springer.com")
    assert KEY not in json.dumps([download.path, download.query, download.headers])
    assert_key_nowhere(env, result)


async def test_springer_not_open_access_is_a_denial(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_closed(upstream)
    upstream.json("api.springernature.com", "/openaccess/json", springer_answer("false"))
    env = {**doiget_env, **SPRINGER_GRANT}
    with pytest.raises(DoigetError) as caught:
        await fetch(env, CLOSED)
    assert caught.value.code is ErrorCode.CAPABILITY_DENIED
    assert "not open access" in caught.value.message
    assert upstream.requests_to("link.springer.com") == []
    assert_key_nowhere(env, caught.value.message)


async def test_springer_echoing_the_key_in_an_error_leaks_it_nowhere(
    upstream: ReplayUpstream, doiget_env: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    route_closed(upstream)
    upstream.route(
        "api.springernature.com",
        "/openaccess/json",
        Reply(400, f'{{"error": "Invalid api_key={KEY.upper()[:12]} for this API"}}'.encode()),
    )
    env = {**doiget_env, **SPRINGER_GRANT, "DOIGET_LOG_LEVEL": "DEBUG"}
    caplog.set_level("DEBUG")
    with pytest.raises(DoigetError) as caught:
        await fetch(env, CLOSED)
    assert_key_nowhere(env, caught.value.message, caught.value.details, caplog.text)


async def test_a_grant_never_sends_another_publishers_doi(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    """An Elsevier grant and a Springer DOI: Elsevier is never asked; the error says
    which grant could serve it."""
    route_closed(upstream)
    env = {**doiget_env, **ELSEVIER_GRANT}
    with pytest.raises(DoigetError) as caught:
        await fetch(env, CLOSED)
    assert caught.value.code is ErrorCode.NO_OA_AVAILABLE
    assert "DOIGET_AGREE_TDM_SPRINGER" in caught.value.message
    assert upstream.requests_to("api.elsevier.com") == []
    assert upstream.requests_to("api.springernature.com") == []
    assert tdm_rows(env) == []


async def test_without_a_grant_no_tdm_api_is_asked(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_jns_closed(upstream)
    with pytest.raises(DoigetError) as caught:
        await fetch(doiget_env, JNS)
    assert "DOIGET_AGREE_TDM_ELSEVIER=1 and DOIGET_KEY_ELSEVIER" in caught.value.message
    assert upstream.requests_to("api.elsevier.com") == []


async def test_a_grant_without_the_sources_installed_says_how_to_install(
    upstream: ReplayUpstream, doiget_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The install state is the one thing simulated: the doiget-tdm distribution is
    present in the test environment, so its entry points are hidden here."""
    monkeypatch.setattr(capability, "installed_tdm_sources", frozenset)
    route_jns_closed(upstream)
    env = {**doiget_env, **ELSEVIER_GRANT}
    profile = capability.CapabilityProfile.from_env(env)
    report = profile.to_redacted_dict()
    assert report["tdm_elsevier"] is False and report["tdm_enabled"] is False
    assert report["tdm_not_installed"] == ["elsevier"]
    assert "elsevier(agreed=" in profile.banner() and "not installed" in profile.banner()
    with pytest.raises(DoigetError) as caught:
        await fetch(env, JNS)
    assert caught.value.code is ErrorCode.CAPABILITY_DENIED
    assert "pip install -e '.[tdm]'" in caught.value.message
    assert upstream.requests_to("api.elsevier.com") == []
    (row,) = tdm_rows(env)
    assert (row["result"], row["error_code"]) == ("denied", "CAPABILITY_DENIED")


async def test_the_plan_lists_a_granted_tdm_source_for_its_prefix_only(
    doiget_env: dict[str, str],
) -> None:
    papers = make_papers({**doiget_env, **ELSEVIER_GRANT})
    try:
        jns = plain(await papers.fetch(c.PaperFetch(ref=JNS, dry_run=True)))
        closed = plain(await papers.fetch(c.PaperFetch(ref=CLOSED, dry_run=True)))
    finally:
        await papers.aclose()
    jns_sources = {s["key"]: s["candidate_hosts"] for s in jns["plan"]["pdf_sources"]}
    assert jns_sources["tdm-elsevier"] == ["api.elsevier.com"]
    assert "tdm-elsevier" not in [s["key"] for s in closed["plan"]["pdf_sources"]]
