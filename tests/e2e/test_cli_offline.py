"""With no network at all, every source fails once, plainly, and fast: a name that
does not resolve or a refused connection is not retried as if the upstream were busy.

The no-network runs happen in an empty network namespace (``unshare -n``), so
nothing can leave the machine even if the code under test were broken.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess

import pytest

from cliutil import clean_env, command

NATURE = "10.1038/nature12373"

needs_unshare = pytest.mark.skipif(
    shutil.which("unshare") is None
    or subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False).returncode,
    reason="needs unshare -n (an empty network namespace)",
)


def offline_env(doiget_env: dict[str, str]) -> dict[str, str]:
    """The test environment without the host map: every name goes to DNS."""
    env = {k: v for k, v in doiget_env.items() if k not in ("DOIGET_HOST_MAP",)}
    return {
        **env,
        "DOIGET_ENABLE_OPENALEX": "1",
        "DOIGET_ENABLE_S2": "1",
        "DOIGET_ENABLE_DOAJ": "1",
        "DOIGET_LOG_LEVEL": "DEBUG",
    }


def error_message(done: subprocess.CompletedProcess[str]) -> str:
    """The message of the JSON error the command printed."""
    printed = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("{")]
    document = json.loads(printed[-1])
    return str(document["error"]["message"] if "error" in document else document["message"])


def in_empty_netns(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["unshare", "-n", *command(*args)],
        env=clean_env(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@needs_unshare
@pytest.mark.parametrize("args", [("fetch", NATURE), ("resolve", NATURE)])
def test_no_network_is_said_once_and_nothing_is_retried(
    doiget_env: dict[str, str], args: tuple[str, ...]
) -> None:
    done = in_empty_netns(*args, "--json", env=offline_env(doiget_env))
    assert done.returncode == 1, done.stderr
    message = error_message(done)
    assert "no network" in message
    assert "api.crossref.org" in message
    assert "tried up to" not in message and "ConnectError" not in message
    # Each source was asked once: no second attempt anywhere.
    assert "attempt 1)" in done.stderr
    assert "attempt 2)" not in done.stderr
    assert "WARNING" not in done.stderr
    # Said once to the user; the DEBUG log has one line a source.
    said = (done.stdout + done.stderr).count("no network")
    assert said == done.stderr.count("lookup failed") + 1


@needs_unshare
def test_no_network_in_a_web_scrape_is_one_plain_failure(doiget_env: dict[str, str]) -> None:
    done = in_empty_netns(
        "web", "scrape", "https://blog.example.org/", "--json", env=offline_env(doiget_env)
    )
    assert done.returncode != 0
    assert "no network: could not resolve blog.example.org" in error_message(done)
    assert "attempt 2)" not in done.stderr


def test_a_refused_connection_is_not_retried(doiget_env: dict[str, str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]  # nothing listens here once closed
    env = {
        **doiget_env,
        "DOIGET_HOST_MAP": f"api.crossref.org=127.0.0.1:{closed_port},"
        f"api.unpaywall.org=127.0.0.1:{closed_port}",
        "DOIGET_LOG_LEVEL": "DEBUG",
    }
    done = subprocess.run(
        command("resolve", NATURE, "--json"),
        env=clean_env(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "connection was refused" in error_message(done)
    assert "attempt 2)" not in done.stderr
