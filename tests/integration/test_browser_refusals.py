"""A page that tries to reach loopback, the metadata address and a private range from
script, worker, iframe, image, form, beacon, WebSocket and redirect gets nothing.

It runs in an empty network namespace (``unshare -n``) whose only device is its own
loopback, with the metadata and private addresses added to it and a canary listening
on each: nothing can leave the machine even if the guard were broken, and any
connection the guard let through would show as a canary hit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from browserutil import browser_or_skip

PROBE = Path(__file__).resolve().parent / "browser_probe.py"
SETUP = (
    "ip link set lo up && ip addr add 169.254.169.254/32 dev lo && "
    'ip addr add 10.11.12.13/32 dev lo && exec "$0" "$1"'
)


def _namespace_or_skip() -> None:
    usable = shutil.which("unshare") and shutil.which("ip")
    if usable:
        done = subprocess.run(
            ["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, check=False
        )
        usable = done.returncode == 0
    if usable:
        return
    if os.environ.get("CI"):
        pytest.fail("CI must run the browser refusal test: unshare -n and ip are needed")
    pytest.skip("needs unshare -n and ip (an empty network namespace)")


@pytest.fixture(scope="module")
def probe() -> dict[str, object]:
    browser_or_skip()
    _namespace_or_skip()
    done = subprocess.run(
        ["unshare", "-n", "sh", "-c", SETUP, sys.executable, str(PROBE)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_no_canary_sees_a_connection_and_each_would_have(probe: dict[str, object]) -> None:
    hits = probe["hits"]
    assert hits == dict.fromkeys(hits, 0), hits  # type: ignore[arg-type]
    control = probe["control"]
    assert control == dict.fromkeys(control, 1), control  # type: ignore[arg-type]


def test_the_page_is_still_read_by_the_browser(probe: dict[str, object]) -> None:
    body = probe["body"]
    assert isinstance(body, dict)
    assert body["extractedBy"] == "browser"
    assert "tried to reach inside" in body["content"]


@pytest.mark.parametrize(
    "attempt",
    [
        "http://127.0.0.1:{loopback}/steal",  # fetch from script
        "https://127.0.0.1:{loopback}/steal",
        "http://localhost:{loopback}/steal",
        "/steal",  # the IPv6 loopback, port varies
        "https://169.254.169.254/latest/meta-data/ (web:",
        "https://169.254.169.254/xhr",  # XMLHttpRequest
        "https://10.11.12.13/internal",
        "https://10.11.12.13/evil.js",  # a script element
        "http://127.0.0.1:{loopback}/evil.js",
        "http://127.0.0.1:{loopback}/worker",  # from a dedicated worker
        "https://blog.example.org/bounce (web: 169.254.169.254",  # a redirect hop
        "https://10.11.12.13/frame (navigation",  # an iframe
        "https://blog.example.org/bounce-frame (navigation",  # an iframe that redirects
        "http://127.0.0.1:{loopback}/post (navigation",  # a form posted by script
        "https://169.254.169.254/latest/meta-data/image.png",  # an image
        "WebSocket",
    ],
)
def test_every_attempt_was_seen_and_refused(probe: dict[str, object], attempt: str) -> None:
    log = [line for line in probe["log"] if line.startswith("browser request refused")]  # type: ignore[attr-defined]
    loopback = next(
        line.split("127.0.0.1:")[1].split("/")[0] for line in log if "127.0.0.1:" in line
    )
    expected = attempt.format(loopback=loopback)
    assert any(expected in line for line in log), (expected, log)


def test_only_the_page_and_its_own_scripts_were_fetched(probe: dict[str, object]) -> None:
    assert sorted(probe["seen"]) == sorted(  # type: ignore[arg-type]
        ["GET /attack", "GET /static/attack.js", "GET /static/worker.js", "GET /bounce"]
    )
