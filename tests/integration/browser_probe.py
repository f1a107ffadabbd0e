"""Run inside an empty network namespace (see test_browser_refusals.py): serve a page
that tries every way a page can reach loopback, the cloud metadata address and a
private range, scrape it with the browser tier, and print what each canary saw.

The namespace has only its own loopback device, to which the metadata and private
addresses are added, so a canary listens on each and nothing can leave the machine
even if the code under test were broken. Prints one JSON object on stdout.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from replay import ReplayUpstream, Reply  # noqa: E402

HOST = "blog.example.org"
METADATA = "169.254.169.254"
PRIVATE = "10.11.12.13"
HTML = {"Content-Type": "text/html; charset=utf-8"}
JS = {"Content-Type": "text/javascript"}


class Canary:
    """A TCP listener that counts every connection made to it, whatever it carries."""

    def __init__(self, address: str, port: int) -> None:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((address, port))
        self.sock.listen(64)
        self.address, self.port = address, self.sock.getsockname()[1]
        self.hits = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.hits += 1
            connection.close()

    @property
    def name(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{host}:{self.port}"


def attack_script(loopback: Canary, loopback6: Canary) -> bytes:
    targets = [
        f"http://{loopback.name}/steal",
        f"https://{loopback.name}/steal",
        f"http://{loopback6.name}/steal",
        f"http://localhost:{loopback.port}/steal",
        f"http://{METADATA}/latest/meta-data/",
        f"https://{METADATA}/latest/meta-data/",
        f"https://{PRIVATE}/internal",
        f"http://{PRIVATE}/internal",
        "/bounce",
    ]
    return f"""
const targets = {json.dumps(targets)};
for (const t of targets) {{ fetch(t).catch(() => 0); }}
const x = new XMLHttpRequest(); x.open('GET', 'https://{METADATA}/xhr'); x.send();
try {{ navigator.sendBeacon('https://{METADATA}/beacon', 'x'); }} catch (e) {{}}
try {{ new WebSocket('ws://{loopback.name}/ws'); }} catch (e) {{}}
try {{ new WebSocket('wss://{PRIVATE}/ws'); }} catch (e) {{}}
new Worker('/static/worker.js');
const form = document.createElement('form');
form.action = 'http://{loopback.name}/post'; form.method = 'post';
document.body.appendChild(form);
setTimeout(() => form.submit(), 100);
document.getElementById('root').innerHTML = '<article><h1>Probe article</h1><p>' +
  'This text was written by the page script after it tried to reach inside. '.repeat(20) +
  '</p></article>';
""".encode()


def attack_page(loopback: Canary) -> bytes:
    return f"""<!doctype html><html><head><title>Probe</title>
<meta http-equiv="refresh" content="1;url=https://{METADATA}/refresh">
<link rel="prefetch" href="https://{PRIVATE}/prefetch">
<link rel="stylesheet" href="https://{PRIVATE}/style.css">
</head><body><div id="root"></div>
<img src="https://{METADATA}/latest/meta-data/image.png">
<img src="http://{loopback.name}/pixel.gif">
<iframe src="https://{PRIVATE}/frame"></iframe>
<iframe src="https://{HOST}/bounce-frame"></iframe>
<script src="https://{PRIVATE}/evil.js"></script>
<script src="http://{loopback.name}/evil.js"></script>
<script src="/static/attack.js"></script>
</body></html>""".encode()


async def scrape(env: dict[str, str]) -> dict[str, Any]:
    from doiget.config import load_settings
    from doiget.errors import DoigetError
    from doiget.web.requests import ScrapePageRequest
    from doiget.web.service import WebCore

    core = WebCore(load_settings(env))
    try:
        outcome = await core.scrape(ScrapePageRequest(url=f"https://{HOST}/attack"))
        return {"body": outcome.body}
    except DoigetError as error:
        return {"error": error.message}
    finally:
        await core.aclose()


def main() -> None:
    canaries = {
        "loopback": Canary("127.0.0.1", 0),
        "loopback6": Canary("::1", 0),
        "metadata-80": Canary(METADATA, 80),
        "metadata-443": Canary(METADATA, 443),
        "private-80": Canary(PRIVATE, 80),
        "private-443": Canary(PRIVATE, 443),
    }
    loopback, loopback6 = canaries["loopback"], canaries["loopback6"]
    work = Path(tempfile.mkdtemp())
    upstream = ReplayUpstream(hosts=(HOST,), tmp_dir=work).start(work)
    upstream.route(HOST, "/attack", Reply(200, attack_page(loopback), HTML))
    upstream.route(HOST, "/static/attack.js", Reply(200, attack_script(loopback, loopback6), JS))
    worker = f"fetch('http://{loopback.name}/worker').catch(() => 0);".encode()
    upstream.route(HOST, "/static/worker.js", Reply(200, worker, JS))
    upstream.redirect(HOST, "/bounce", f"https://{METADATA}/latest/meta-data/")
    upstream.redirect(HOST, "/bounce-frame", f"http://{PRIVATE}/")
    env = {
        **upstream.isolated_env(work),
        "DOIGET_WEB_CACHE": "0",
        "DOIGET_BROWSER_DEADLINE": "15",
    }
    refusals: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            refusals.append(record.getMessage())

    logger = logging.getLogger("doiget.web")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(Collect())
    result = asyncio.run(scrape(env))
    hits = {name: canary.hits for name, canary in canaries.items()}
    # The control: each canary does count a connection that reaches it.
    for name, canary in canaries.items():
        with socket.create_connection((canary.address, canary.port), timeout=5):
            pass
        waited = 0.0
        while canary.hits == hits[name] and waited < 5:  # the accept thread counts it
            time.sleep(0.01)
            waited += 0.01
    control = {name: canary.hits - hits[name] for name, canary in canaries.items()}
    seen = [f"{record.method} {record.path}" for record in upstream.requests]
    upstream.stop()
    print(json.dumps({**result, "hits": hits, "control": control, "log": refusals, "seen": seen}))


if __name__ == "__main__":
    main()
