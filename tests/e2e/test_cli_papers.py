"""The papers commands as separate processes: crash safety, concurrency, audit."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from cliutil import clean_env, command, doiget
from papersutil import JOSE_PDF, NATURE, read_toml, route_nature
from replay import FIXTURES, ReplayUpstream, Reply


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_fetch_then_library_commands_speak_one_json_object_per_line(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    served = route_nature(upstream)
    fetched = doiget("fetch", NATURE, "--json", env=doiget_env)
    assert fetched.returncode == 0, fetched.stderr
    (result,) = json_lines(fetched.stdout)
    assert result["ok"] is True and Path(result["path"]).read_bytes() == served
    assert set(result) >= {
        "ref",
        "source",
        "resolver_profile",
        "path",
        "license",
        "size_bytes",
        "schema_version",
    }

    found = json_lines(doiget("--json", "search", "thermometry", env=doiget_env).stdout)[0]
    assert found["results"][0]["ref"] == NATURE
    info = json_lines(doiget("info", NATURE, "--json", env=doiget_env).stdout)[0]
    assert info["metadata"]["venue"] == "Nature"
    path = doiget("pdf-path", NATURE, env=doiget_env)
    assert path.stdout.strip() == result["path"]
    recent = json_lines(doiget("recent", "--json", env=doiget_env).stdout)[0]
    assert recent["count"] == 1
    plan = json_lines(doiget("fetch", "2104.12255", "--dry-run", "--json", env=doiget_env).stdout)[
        0
    ]
    assert plan["plan"]["pdf_sources"][0]["key"] == "arxiv"
    audit = doiget("audit-log", "--verify", "--json", env=doiget_env)
    assert audit.returncode == 0 and json_lines(audit.stdout)[0]["ok"] is True


def test_invalid_ref_exits_2_with_the_accepted_forms(doiget_env: dict[str, str]) -> None:
    done = doiget("fetch", "not-a-doi", env=doiget_env)
    assert done.returncode == 2
    assert "INVALID_REF" in done.stderr and "hep-th/9901001" in done.stderr


def test_sigkill_mid_download_leaves_no_partial_pdf_and_no_dangling_metadata(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)
    pdf = (FIXTURES / JOSE_PDF).read_bytes()
    slow = Reply(200, pdf, {"Content-Type": "application/pdf"}, trickle=0.05)
    upstream.route("europepmc.org", "/articles/pmc4221854", slow)
    store = Path(doiget_env["DOIGET_STORE_ROOT"])
    process = subprocess.Popen(
        command("fetch", NATURE),
        env=clean_env(doiget_env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not list(store.glob(".doiget-*.part")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(store.glob(".doiget-*.part")), "the download never started"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)

    assert not list(store.glob("*.pdf"))
    for toml in (store / ".metadata").glob("*.toml"):
        document = read_toml(toml)
        assert "pdf_path" not in document or Path(document["pdf_path"]).is_file()
    listed = doiget("recent", "--json", env=doiget_env)
    assert listed.returncode == 0
    assert not list(store.glob(".doiget-*.part")), "the next start sweeps the dead download"
    assert doiget("audit-log", "--verify", env=doiget_env).returncode == 0


def test_two_processes_fetching_one_ref_leave_one_consistent_entry(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)
    pdf = (FIXTURES / JOSE_PDF).read_bytes()
    upstream.route(
        "europepmc.org",
        "/articles/pmc4221854",
        Reply(200, pdf, {"Content-Type": "application/pdf"}, trickle=0.005),
    )
    runs = [
        subprocess.Popen(
            command("--json", "fetch", NATURE),
            env=clean_env(doiget_env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outcomes = [run.communicate(timeout=120) for run in runs]
    for run, (stdout, stderr) in zip(runs, outcomes, strict=True):
        if run.returncode != 0:
            assert run.returncode == 4 and "LOCK_TIMEOUT" in stderr, stderr
        else:
            assert json_lines(stdout)[0]["ok"] is True
    assert any(run.returncode == 0 for run in runs)
    store = Path(doiget_env["DOIGET_STORE_ROOT"])
    (stored,) = store.glob("*.pdf")
    assert stored.read_bytes() == pdf
    (toml,) = (store / ".metadata").glob("*.toml")
    document = read_toml(toml)
    assert document["pdf_path"] == str(stored)
    assert document["doiget"]["sha256"] == hashlib.sha256(pdf).hexdigest()
    assert not list(store.glob(".doiget-*.part"))
    assert doiget("audit-log", "--verify", env=doiget_env).returncode == 0


def test_tampered_provenance_row_is_reported_by_audit_log(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)
    assert doiget("fetch", NATURE, env=doiget_env).returncode == 0
    log = Path(doiget_env["DOIGET_LOG_PATH"])
    lines = log.read_text().splitlines()
    target = next(i for i, line in enumerate(lines) if '"store_write"' in line)
    row = json.loads(lines[target])
    row["size"] = (row["size"] or 0) + 1
    lines[target] = json.dumps(row)
    log.write_text("\n".join(lines) + "\n")
    done = doiget("audit-log", "--verify", "--json", env=doiget_env)
    assert done.returncode == 4
    report = json_lines(done.stdout)[0]
    assert report["ok"] is False
    assert report["first_broken"] == target


@pytest.mark.parametrize("damage", ["cut", "empty", "delete"])
def test_a_cut_emptied_or_deleted_log_fails_audit_log(
    upstream: ReplayUpstream, doiget_env: dict[str, str], damage: str
) -> None:
    route_nature(upstream)
    assert doiget("fetch", NATURE, env=doiget_env).returncode == 0
    log = Path(doiget_env["DOIGET_LOG_PATH"])
    lines = log.read_bytes().splitlines(keepends=True)
    if damage == "cut":
        log.write_bytes(b"".join(lines[:-2]))
    elif damage == "empty":
        log.write_bytes(b"")
    else:
        log.unlink()
    done = doiget("audit-log", "--verify", "--json", env=doiget_env)
    assert done.returncode == 4, done.stdout
    report = json_lines(done.stdout)[0]
    assert report["ok"] is False
    assert report["head_rows"] == len(lines)
    assert "missing" in report["reason"] or "empty" in report["reason"]
    # The cut is not written over by the next command either.
    assert doiget("fetch", NATURE, env=doiget_env).returncode == 4


def test_exports_and_graph_from_the_command_line(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)
    assert doiget("fetch", NATURE, env=doiget_env).returncode == 0
    bib = doiget("bib", NATURE, env=doiget_env)
    assert bib.returncode == 0, bib.stderr
    assert bib.stdout.startswith("@article{kucsko2013nanometre,")
    assert "journal = {Nature}" in bib.stdout
    items = json_lines(doiget("csl", NATURE, "--json", env=doiget_env).stdout)[0]["items"]
    assert items[0]["DOI"] == NATURE and items[0]["type"] == "article-journal"
    missing = doiget("bib", NATURE, "10.1000/not-stored", "--json", env=doiget_env)
    assert missing.returncode != 0
    assert json.loads(missing.stdout.strip().splitlines()[-1])["error"]["code"] == "NOT_FOUND"

    denied = doiget("graph", NATURE, "--json", env=doiget_env)
    assert (
        json.loads(denied.stdout.strip().splitlines()[-1])["error"]["code"] == "CAPABILITY_DENIED"
    )
    upstream.fixture(
        "api.openalex.org", f"/works/doi:{NATURE}", "openalex/works-W2741809807-2026.json"
    )
    upstream.fixture(
        "api.openalex.org", "/works", "openalex/works-filter-cites-W2741809807-page1-per50.json"
    )
    env = {**doiget_env, "DOIGET_ENABLE_OPENALEX": "1"}
    graph = doiget("graph", NATURE, "--direction", "citations", "--json", env=env)
    assert graph.returncode == 0, graph.stderr
    result = json_lines(graph.stdout)[0]
    assert result["count"] == 21 and result["truncated"] is True
    table = doiget("graph", NATURE, "--direction", "citations", env=env)
    assert table.returncode == 0, table.stderr
    assert result["nodes"][1]["id"] in table.stdout
    assert "21 works, 20 edges (truncated by the caps)" in table.stdout
