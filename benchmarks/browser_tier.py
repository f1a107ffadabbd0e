"""scrape_page's browser tier: how many script-built pages it reads, what it costs.

A set of pages whose text is written by script in the ways real sites do it (an app
bundle filling a mount point, data fetched as JSON, a delayed render, a <noscript>
shell, embedded hydration data ...) and two server-rendered controls are served by
the test suite's replay upstream (loopback TLS, through the host-map seam). Each is
scraped with the browser tier off, then on, through the web core as scrape_page
runs it. Reported:

- per page, whether its text was extracted and by which tier, and the time;
- the share of script-built pages extracted, tier off vs on;
- the browser's cold start (first page, launch included) and warm per-page times;
- memory: this process before the tier is used, with the browser up (the process
  tree's PSS and RSS: the Playwright driver and Chromium's processes), and after
  the idle close;
- ``doiget serve --toolsets web``: spawn to tools/list and idle RSS, with the
  browser extra installed and with it hidden, to show a server that does not use
  the tier does not pay for it.

    python benchmarks/browser_tier.py
    python benchmarks/browser_tier.py --rounds 5 --spawns 10
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smoke import parse_args

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "benchmarks")]

from cold_start import one_spawn  # noqa: E402

from replay import ReplayUpstream, Reply  # noqa: E402

HOST = "blog.example.org"
HTML = {"Content-Type": "text/html; charset=utf-8"}
JS = {"Content-Type": "text/javascript"}
JSON_TYPE = {"Content-Type": "application/json"}
PARAS = [
    f"Sentence group {n}: the survey counted nesting pairs on each island twice a season, "
    "and the counts agreed within a tenth between the two observers."
    for n in range(10)
]
PHRASE = "the counts agreed within a tenth between the two observers"
ARTICLE_JS = json.dumps("<article><h1>Island survey</h1>" + "".join(f"<p>{p}</p>" for p in PARAS))


def _page(body: str) -> bytes:
    head = "<!doctype html><html><head><title>Survey</title></head>"
    return f"{head}<body>{body}</body></html>".encode()


@dataclass(frozen=True)
class Case:
    name: str
    page: bytes
    assets: dict[str, tuple[bytes, dict[str, str]]]
    script_built: bool = True


def cases() -> list[Case]:
    fill = f"document.getElementById('root').innerHTML = {ARTICLE_JS};".encode()
    data = json.dumps({"html": json.loads(ARTICLE_JS)}).encode()
    fetch_fill = (
        b"fetch('api/story').then(r => r.json()).then(d => "
        b"{ document.getElementById('root').innerHTML = d.html; });"
    )
    padding = "/* " + "application code " * 150 + " */"
    static = _page(json.loads(ARTICLE_JS))
    return [
        Case(
            "react: #root + bundle",
            _page('<div id="root"></div><script src="a.js"></script>'),
            {"a.js": (fill, JS)},
        ),
        Case(
            "next: #__next + JSON API",
            _page('<div id="__next"><div id="root"></div></div><script src="a.js"></script>'),
            {"a.js": (fetch_fill, JS), "api/story": (data, JSON_TYPE)},
        ),
        Case(
            "vue: #app + inline module",
            _page(
                '<div id="app" data-v-app><div id="root"></div></div><script type="module">'
                f"{padding}{fill.decode()}</script>"
            ),
            {},
        ),
        Case(
            "noscript shell",
            _page(
                "<noscript>You need to enable JavaScript to run this app.</noscript>"
                '<div id="root"></div><script src="a.js"></script>'
            ),
            {"a.js": (fill, JS)},
        ),
        Case(
            "angular: <app-root> + delayed render",
            _page('<app-root><div id="root"></div></app-root><script src="a.js"></script>'),
            {"a.js": (b"setTimeout(() => {" + fill + b"}, 300);", JS)},
        ),
        Case(
            "loading placeholder + XHR",
            _page('<div id="root"><p>Loading…</p></div><script src="a.js"></script>'),
            {"a.js": (fetch_fill, JS), "api/story": (data, JSON_TYPE)},
        ),
        Case(
            "bare body + bundle",
            _page('<script src="a.js"></script>'),
            {
                "a.js": (
                    f"document.body.innerHTML = '<div id=\"root\"></div>';{fill.decode()}".encode(),
                    JS,
                )
            },
        ),
        Case(
            "hydration data",
            _page(
                '<div id="root"></div><script id="__NEXT_DATA__" type="application/json">'
                f'{data.decode()}</script><script src="a.js"></script>'
            ),
            {
                "a.js": (
                    b"const d = JSON.parse(document.getElementById('__NEXT_DATA__')"
                    b".textContent); document.getElementById('root').innerHTML = d.html;",
                    JS,
                )
            },
        ),
        Case("control: server-rendered", static, {}, script_built=False),
        Case(
            "control: server-rendered + analytics",
            _page(json.loads(ARTICLE_JS) + '<script src="a.js"></script>'),
            {"a.js": (b"void 0;", JS)},
            script_built=False,
        ),
    ]


def tree_memory_mib(pid: int) -> tuple[float, float]:
    """(PSS, RSS) in MiB of ``pid`` and all its descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    pss = rss = 0
    todo = [pid]
    while todo:
        current = todo.pop()
        todo.extend(children.get(current, []))
        try:
            for line in Path(f"/proc/{current}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    pss += int(line.split()[1])
                elif line.startswith("Rss:"):
                    rss += int(line.split()[1])
        except OSError:
            continue
    return pss / 1024, rss / 1024


async def scrape_all(env: dict[str, str], urls: list[str]) -> tuple[list[dict[str, Any]], Any]:
    from doiget.config import load_settings
    from doiget.errors import DoigetError
    from doiget.web.requests import ScrapePageRequest
    from doiget.web.service import WebCore

    core = WebCore(load_settings(env))
    rows = []
    memory = {"before": tree_memory_mib(os.getpid())}
    for url in urls:
        started = time.perf_counter()
        try:
            body = (await core.scrape(ScrapePageRequest(url=url))).body
            found, tier = PHRASE in body["content"], body.get("extractedBy", "?")
        except DoigetError as error:
            found, tier = False, f"error: {error.message[:60]}"
        rows.append({"found": found, "tier": tier, "seconds": time.perf_counter() - started})
    memory["up"] = tree_memory_mib(os.getpid())
    tier_object = core.scraper.browser
    if tier_object is not None and tier_object.running:
        idle = float(env.get("DOIGET_BROWSER_IDLE", "120"))
        await asyncio.sleep(idle + 1.5)
        memory["idle_closed"] = tree_memory_mib(os.getpid())
    await core.aclose()
    return rows, memory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="warm passes over the pages")
    parser.add_argument("--spawns", type=int, default=5, help="server spawns per variant")
    # The first pass already reads pages with the browser up: a smoke run needs no more.
    args = parse_args(parser, rounds=0, spawns=1)
    work = Path(tempfile.mkdtemp())
    upstream = ReplayUpstream(hosts=(HOST,), tmp_dir=work).start(work)
    pages = cases()
    urls = []
    for number, case in enumerate(pages):
        prefix = f"/p{number}"
        upstream.route(HOST, prefix + "/", Reply(200, case.page, HTML))
        for path, (body, headers) in case.assets.items():  # relative to the page
            upstream.route(HOST, f"{prefix}/{path}", Reply(200, body, headers))
        urls.append(f"https://{HOST}{prefix}/")
    base = {
        **upstream.isolated_env(work),
        "DOIGET_WEB_CACHE": "0",
        "DOIGET_BROWSER_IDLE": "3",
    }
    off_rows, _ = asyncio.run(scrape_all({**base, "DOIGET_BROWSER": "off"}, urls))
    on_rows, memory = asyncio.run(scrape_all(base, urls + urls * args.rounds))
    first_pass = on_rows[: len(urls)]
    print(
        f"{len(pages)} pages ({sum(c.script_built for c in pages)} script-built), "
        "served on loopback through the host map\n"
    )
    print("| page | tier off | tier on | extracted by | first pass s |")
    print("|---|---|---|---|---|")
    for case, off, on in zip(pages, off_rows, first_pass, strict=True):
        print(
            f"| {case.name} | {'yes' if off['found'] else 'no'} | {'yes' if on['found'] else 'no'} "
            f"| {on['tier']} | {on['seconds']:.2f} |"
        )
    built = [i for i, case in enumerate(pages) if case.script_built]
    share_off = sum(off_rows[i]["found"] for i in built) / len(built)
    share_on = sum(first_pass[i]["found"] for i in built) / len(built)
    browser_times = [row["seconds"] for row in on_rows[len(urls) :] if row["tier"] == "browser"]
    html_times = [row["seconds"] for row in on_rows[len(urls) :] if row["tier"] == "html"]
    print()
    print("| measure | value |")
    print("|---|---|")
    print(f"| script-built pages extracted, tier off | {share_off:.0%} |")
    print(f"| script-built pages extracted, tier on | {share_on:.0%} |")
    print(f"| first browser page (launch included) | {on_rows[0]['seconds']:.2f} s |")
    if browser_times:
        print(
            f"| warm browser page, median / max of {len(browser_times)} | "
            f"{statistics.median(browser_times):.2f} s / {max(browser_times):.2f} s |"
        )
    if html_times:
        print(
            f"| server-rendered page, median of {len(html_times)} | "
            f"{statistics.median(html_times):.3f} s |"
        )
    for label, key in (
        ("before the tier is used", "before"),
        ("browser up", "up"),
        ("after the idle close", "idle_closed"),
    ):
        if key in memory:
            pss, rss = memory[key]
            print(f"| process tree {label}: PSS / RSS | {pss:.0f} MiB / {rss:.0f} MiB |")
    upstream.stop()

    shim = work / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(
        "import sys\nsys.modules['playwright'] = None\nsys.modules['playwright.async_api'] = None\n"
    )
    argv = [sys.executable, "-m", "doiget", "serve", "--toolsets", "web"]
    spawn_env = {**os.environ, **base}
    variants = {
        "browser extra installed": spawn_env,
        "browser extra hidden": {**spawn_env, "PYTHONPATH": str(shim)},
    }
    one_spawn(argv, spawn_env)  # warm the file cache
    times: dict[str, list[float]] = {name: [] for name in variants}
    rss: dict[str, list[int]] = {name: [] for name in variants}
    for _ in range(args.spawns):
        for name, env in variants.items():
            elapsed, kib = one_spawn(argv, env)
            times[name].append(elapsed)
            rss[name].append(kib)
    print()
    print(
        f"| doiget serve --toolsets web ({args.spawns} spawns each) | spawn -> tools/list ms "
        "| idle RSS MiB |"
    )
    print("|---|---|---|")
    for name in variants:
        print(
            f"| {name} | {statistics.median(times[name]) * 1000:.0f} | "
            f"{statistics.median(rss[name]) / 1024:.1f} |"
        )


if __name__ == "__main__":
    main()
