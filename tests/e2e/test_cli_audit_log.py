"""`doiget audit-log` as a person runs it: verifying is what it does (with or without
--verify), --json prints one document whatever the outcome, and the cuts the signed
head exists for fail it with what is missing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cliutil import doiget
from papersutil import NATURE, route_nature
from replay import ReplayUpstream


def fetched(upstream: ReplayUpstream, env: dict[str, str]) -> Path:
    route_nature(upstream)
    assert doiget("fetch", NATURE, env=env).returncode == 0
    return Path(env["DOIGET_LOG_PATH"])


def one_document(stdout: str) -> dict[str, object]:
    lines = [line for line in stdout.splitlines() if line.strip()]
    assert len(lines) == 1, stdout
    document = json.loads(lines[0])
    assert isinstance(document, dict)
    return document


@pytest.mark.parametrize("args", [(), ("--verify",)], ids=["default", "--verify"])
def test_audit_log_verifies_by_default(
    upstream: ReplayUpstream, doiget_env: dict[str, str], args: tuple[str, ...]
) -> None:
    fetched(upstream, doiget_env)
    done = doiget("audit-log", *args, env=doiget_env)
    assert done.returncode == 0, done.stderr
    assert "verified" in done.stdout and "signed head matches" in done.stdout
    document = one_document(doiget("audit-log", *args, "--json", env=doiget_env).stdout)
    assert document["ok"] is True and document["anchored"] is True


def test_a_broken_chain_prints_one_json_document_with_the_error(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    log = fetched(upstream, doiget_env)
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-2]))
    done = doiget("audit-log", "--json", env=doiget_env)
    assert done.returncode == 4
    document = one_document(done.stdout)
    assert document["ok"] is False
    error = document["error"]
    assert isinstance(error, dict) and error["code"] == "LOG_ERROR"
    assert "missing from the end" in str(document["reason"])
    assert document["head_rows"] == len(lines)


def key_of(env: dict[str, str]) -> Path:
    return Path(env["DOIGET_CONFIG"]).parent / "keys" / "provenance.key"


def cut_and_drop_head(log: Path) -> None:
    """head -n -3 log > t && mv t log && rm log.head"""
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-3]))
    log.with_name(log.name + ".head").unlink()


def rebuild_head(log: Path) -> None:
    """A head written from the log's own last row, after cutting it."""
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-3]))
    last = json.loads(lines[-4])
    head = log.with_name(log.name + ".head")
    head.write_text(json.dumps({"seq": last["seq"], "this_hash": last["this_hash"]}))


def delete_log_and_head(log: Path) -> None:
    log.unlink()
    log.with_name(log.name + ".head").unlink()


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (cut_and_drop_head, "missing"),
        (rebuild_head, "not signed"),
        (delete_log_and_head, "missing"),
        (lambda log: log.unlink(), "the log is missing"),
    ],
    ids=["cut-and-drop-head", "rebuilt-head", "log-and-head-deleted", "log-deleted"],
)
def test_a_cut_log_stays_caught_after_the_next_command(
    upstream: ReplayUpstream, doiget_env: dict[str, str], damage: object, words: str
) -> None:
    log = fetched(upstream, doiget_env)
    damage(log)  # type: ignore[operator]
    resolved = doiget("resolve", NATURE, env=doiget_env)
    assert resolved.returncode == 4 and "LOG_ERROR" in resolved.stderr  # nothing written over
    assert "Traceback" not in resolved.stderr
    done = doiget("audit-log", env=doiget_env)
    assert done.returncode == 4
    assert words in done.stdout + done.stderr


def test_a_lost_key_fails_audit_log_and_names_the_setting(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    fetched(upstream, doiget_env)
    shutil.rmtree(key_of(doiget_env).parent)
    done = doiget("audit-log", "--json", env=doiget_env)
    assert done.returncode == 4
    assert "DOIGET_PROVENANCE_KEY_PATH" in str(one_document(done.stdout)["reason"])


def test_a_key_placed_beside_the_log_refuses_to_start(doiget_env: dict[str, str]) -> None:
    log = Path(doiget_env["DOIGET_LOG_PATH"])
    env = {**doiget_env, "DOIGET_PROVENANCE_KEY_PATH": str(log.with_name("provenance.key"))}
    done = doiget("audit-log", env=env)
    assert done.returncode == 2
    assert "DOIGET_PROVENANCE_KEY_PATH" in done.stderr
