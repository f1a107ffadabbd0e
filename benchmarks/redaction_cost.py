"""What redaction costs per log line and per tool result, by number of configured secrets.

Every log record (every library's, at every level), every error and every tool result
passes through the redactor when a secret is configured. This measures
``redact_text`` on a typical ~200-byte log line (an httpx request line with a
percent-encoded query) and a ~20 KB tool result (search results as JSON, URLs and
escapes included), each clean and with every secret echoed in a few encodings, for
0, 3 and 12 random 32-character keys. The matcher is built once per set of secrets
(its build time is shown) and cached. Times are the process's CPU time (median of
the rounds), so other load on a shared machine counts for less.

    python benchmarks/redaction_cost.py
    python benchmarks/redaction_cost.py --repeat 9
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import statistics
import string
import time
from collections.abc import Callable
from functools import partial
from urllib.parse import quote

from smoke import parse_args

from doiget.redaction import _matcher, redact_text

SECRET_COUNTS = (0, 3, 12)
LINE = (
    "HTTP Request: GET https://api.crossref.org/works?query.bibliographic=deep%20learning%20"
    'for%20protein%20folding&rows=20&mailto=tests%40example.org "HTTP/1.1 200 OK" (182 ms)'
)


def _result() -> str:
    """About 20 KB of search results as an agent gets them."""
    rows = [
        {
            "title": f"Result {i}: a study of protein folding with deep networks, part {i}",
            "url": f"https://example.org/papers/{i}?ref=search%20page&lang=en",
            "doi": f"10.1234/example.{i:05d}",
            "snippet": 'We report that "structure" follows sequence; see x.org/?p=a%2Fb. ' * 2,
            "authors": ["Ada Lovelace", "Alan Turing", "Grace Hopper"],
            "year": 2000 + i % 25,
        }
        for i in range(45)
    ]
    return json.dumps({"results": rows, "provider": "brave", "n": len(rows)}, indent=1)


def _keys(count: int) -> list[str]:
    """``count`` keys of 32 base64url characters, the same on every run (some keys'
    characters make more of a text's escapes worth undoing)."""
    pick = random.Random(count)
    return [
        "".join(pick.choice(string.ascii_letters + string.digits + "-_") for _ in range(32))
        for _ in range(count)
    ]


def _echoes(keys: list[str]) -> str:
    """Each key echoed as upstreams do: cut, base64 of a pair, all percent-encoded."""
    return " ".join(
        f"{key[3:]} Basic {base64.b64encode(f'user:{key}'.encode()).decode()} {quote(key, safe='')}"
        for key in keys
    )


def _median_seconds(run: Callable[[], object], repeat: int, number: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            run()
        samples.append((time.process_time() - start) / number)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds (median shown)")
    args = parse_args(parser, repeat=1)
    result = _result()
    print(f"log line {len(LINE)} bytes, tool result {len(result)} bytes; median of {args.repeat}")
    print(
        "| secrets | build (ms, once) | log line (µs) | line with echoes (µs) "
        "| result (µs) | result with echoes (µs) |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for count in SECRET_COUNTS:
        keys = _keys(count)
        _matcher.cache_clear()
        start = time.process_time()
        _matcher(frozenset(keys))
        build = time.process_time() - start
        echoed_line = f"{LINE} {_echoes(keys[:1])}"
        echoed_result = result.replace("part 7", _echoes(keys), 1)
        timings = [
            _median_seconds(partial(redact_text, text, keys), args.repeat, number)
            for text, number in (
                (LINE, 2000),
                (echoed_line, 2000),
                (result, 40),
                (echoed_result, 40),
            )
        ]
        cells = " | ".join(f"{seconds * 1e6:,.0f}" for seconds in timings)
        print(f"| {count} | {build * 1e3:.1f} | {cells} |")


if __name__ == "__main__":
    main()
