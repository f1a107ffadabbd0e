"""The command line as a person runs it: banner, capabilities, health, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from mcputil import INITIALIZE

from cliutil import doiget

KEY = "aps-key-SHOULD-NEVER-SHOW-7f3a"


def test_version() -> None:
    done = doiget("--version", env={})
    assert done.returncode == 0
    assert done.stdout.strip().startswith("doiget ")


def test_capabilities_json_with_a_grant_shows_no_key_anywhere(doiget_env: dict[str, str]) -> None:
    env = {
        **doiget_env,
        "DOIGET_AGREE_TDM_APS": "1",
        "DOIGET_KEY_APS": KEY,
        "DOIGET_ENABLE_S2": "1",
    }
    done = doiget("-v", "capabilities", "--json", env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["tdm_aps"] is True and data["tdm_enabled"] is True
    assert data["metadata_sources"] == ["semantic_scholar"]
    assert data["rate_limit_per_sec"] == 5.0
    banner_lines = [line for line in done.stderr.splitlines() if line.startswith("[doiget]")]
    assert len(banner_lines) == 1
    assert "tdm=[aps(agreed=" in banner_lines[0]
    assert "host_map=" in banner_lines[0] and "ca_bundle=" in banner_lines[0]
    for piece in (KEY, KEY[:10], KEY[-10:]):
        assert piece not in done.stdout and piece not in done.stderr


def test_global_json_flag_works_like_the_command_flag(doiget_env: dict[str, str]) -> None:
    done = doiget("--json", "capabilities", env=doiget_env)
    assert done.returncode == 0
    assert json.loads(done.stdout)["oa_enabled"] is True


def test_capabilities_table_for_people(doiget_env: dict[str, str]) -> None:
    done = doiget("capabilities", env=doiget_env)
    assert done.returncode == 0
    assert "Open Access retrieval" in done.stdout and "not granted" in done.stdout


def test_agreement_without_key_refuses_start_with_exit_3(doiget_env: dict[str, str]) -> None:
    done = doiget("capabilities", env={**doiget_env, "DOIGET_AGREE_TDM_ELSEVIER": "1"})
    assert done.returncode == 3
    assert "DOIGET_AGREE_TDM_ELSEVIER" in done.stderr and "DOIGET_KEY_ELSEVIER" in done.stderr
    assert done.stdout == ""


def test_key_without_agreement_refuses_start_and_never_echoes_the_key(
    doiget_env: dict[str, str],
) -> None:
    done = doiget("--json", "health", env={**doiget_env, "DOIGET_KEY_APS": KEY})
    assert done.returncode == 3
    error = json.loads(done.stdout.strip().splitlines()[-1])
    assert error["error"]["code"] == "CAPABILITY_DENIED"
    assert KEY not in done.stderr and KEY not in done.stdout


def test_non_loopback_host_map_is_refused_at_start(doiget_env: dict[str, str]) -> None:
    env = {**doiget_env, "DOIGET_HOST_MAP": "api.crossref.org=192.0.2.10:443"}
    done = doiget("health", env=env)
    assert done.returncode == 3
    assert "DOIGET_HOST_MAP" in done.stderr and "loopback" in done.stderr


def test_health_reports_a_writable_store(doiget_env: dict[str, str]) -> None:
    done = doiget("health", "--json", env=doiget_env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True and report["store_writable"] is True
    assert report["schema_version"] == "1.0"
    assert Path(report["store_root"]) == Path(doiget_env["DOIGET_STORE_ROOT"])


def test_health_fails_with_exit_4_when_the_store_is_not_a_directory(
    doiget_env: dict[str, str], tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    done = doiget(
        "--json", "health", env={**doiget_env, "DOIGET_STORE_ROOT": str(blocker / "papers")}
    )
    assert done.returncode == 4
    assert json.loads(done.stdout)["store_writable"] is False
    assert "STORE_ERROR" in done.stderr


def test_unknown_toolset_is_refused_naming_the_known_ones(doiget_env: dict[str, str]) -> None:
    done = doiget("health", env={**doiget_env, "DOIGET_TOOLSETS": "papers,bogus"})
    assert done.returncode == 2  # a configuration error, not a capability refusal
    assert "INVALID_CONFIG" in done.stderr and "DOIGET_TOOLSETS" in done.stderr
    assert "bogus" in done.stderr and "scholar" in done.stderr


def test_serve_through_the_full_command_line_answers_and_ends_at_eof(
    doiget_env: dict[str, str],
) -> None:
    # A global option before serve goes through the command line, not the fast path.
    done = doiget(
        "--json", "serve", "--toolsets", "papers", env=doiget_env, stdin=json.dumps(INITIALIZE)
    )
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout.splitlines()[0])
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "doiget"
