"""The stdio server's edges: stdout purity, end of input and SIGTERM mid-fetch."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from mcputil import converse, frames, responses, spawn_server

from logcheck import verify_env

from papersutil import JOSE_PDF, NATURE, STUB_PDF, route_nature
from replay import FIXTURES, ReplayUpstream, Reply

ARXIV = "1605.08386"


def no_partial_files(store: Path) -> None:
    assert not list(store.rglob("*.part"))
    for toml in (store / ".metadata").glob("*.toml") if (store / ".metadata").is_dir() else []:
        text = toml.read_text()
        if "pdf_path" in text:
            assert (store / f"{toml.stem}.pdf").is_file()


def test_stdout_carries_only_json_rpc_across_all_thirteen_tools(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)
    # No Crossref retries: every call finishes well inside the 5 s shutdown grace.
    upstream.json("api.crossref.org", f"/works/{NATURE}", {"status": "ok"})
    upstream.fixture("export.arxiv.org", "/api/query", "arxiv/id_list-1605.08386.atom")
    upstream.fixture("arxiv.org", "/pdf/1605.08386v1", STUB_PDF)
    upstream.fixture(
        "api.openalex.org", f"/works/doi:{NATURE}", "openalex/works-W2741809807-2026.json"
    )
    upstream.fixture(
        "api.openalex.org", "/works", "openalex/works-filter-cites-W2741809807-page1-per50.json"
    )
    env = {**doiget_env, "DOIGET_ENABLE_OPENALEX": "1", "DOIGET_LOG_LEVEL": "DEBUG"}
    calls = [
        ("doiget_capability_profile", {}),
        ("doiget_health", {}),
        ("doiget_fetch_paper", {"ref": NATURE}),
        ("doiget_fetch_paper", {"ref": ARXIV, "dry_run": True}),
        ("doiget_metadata_only", {"ref": ARXIV}),
        ("doiget_resolve_paper", {"ref": NATURE}),
        ("doiget_batch_fetch", {"refs": [ARXIV]}),
        ("doiget_info", {"ref": NATURE}),
        ("doiget_paper_pdf_path", {"ref": NATURE}),
        ("doiget_search_local", {"query": "thermometry"}),
        ("doiget_list_recent", {}),
        ("doiget_bibtex_export", {"refs": [NATURE]}),
        ("doiget_csl_export", {"refs": [NATURE]}),
        ("doiget_expand_citation_graph", {"ref": NATURE, "direction": "citations"}),
        ("doiget_fetch_paper", {"ref": "nonsense"}),
    ]
    # Calls run concurrently: let the fetch land before the calls that read the library.
    answers, stderr = converse(spawn_server(env), calls, first=3)
    for number, (tool, _) in enumerate(calls, start=2):
        structured = answers[number]["result"]["structuredContent"]
        expected_ok = tool != "doiget_fetch_paper" or number != 1 + len(calls)
        assert structured["ok"] is expected_ok, (tool, structured)
    assert b"DEBUG" in stderr  # the logs went to stderr
    assert verify_env(env).ok


def slow_nature(upstream: ReplayUpstream) -> None:
    """Nature with a drifted Crossref (no retries) and a PDF that trickles for minutes."""
    upstream.json("api.crossref.org", f"/works/{NATURE}", {"status": "ok"})
    upstream.fixture("api.unpaywall.org", f"/v2/{NATURE}", "unpaywall/v2-10.1038_nature12373.json")
    body = (FIXTURES / JOSE_PDF).read_bytes()
    upstream.route(
        "europepmc.org",
        "/articles/pmc4221854",
        Reply(200, body, {"Content-Type": "application/pdf"}, trickle=1.0),
    )


def wait_for_download_start(store: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while not list(store.glob(".doiget-*.part")) and time.monotonic() < deadline:
        assert process.poll() is None
        time.sleep(0.05)
    assert list(store.glob(".doiget-*.part")), "the download never started"


@pytest.mark.parametrize("stop", ["end-of-input", "sigterm"])
def test_stopping_during_a_slow_fetch_exits_cleanly(
    stop: str, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    slow_nature(upstream)
    store = Path(doiget_env["DOIGET_STORE_ROOT"])
    process = spawn_server(doiget_env)
    process.stdin.write(frames(("doiget_fetch_paper", {"ref": NATURE})))  # type: ignore[union-attr]
    process.stdin.flush()  # type: ignore[union-attr]
    wait_for_download_start(store, process)
    if stop == "sigterm":
        process.send_signal(signal.SIGTERM)
    else:
        process.stdin.close()  # type: ignore[union-attr]
    process.wait(timeout=30)  # a hang guard; the server allows in-flight work 5 s
    assert process.returncode == 0
    responses(process.stdout.read())  # type: ignore[union-attr]
    no_partial_files(store)
    assert verify_env(doiget_env).ok
