"""Reading the costliest manuscripts a caller may send never holds up the server's other
callers: over HTTP a draft is read in a worker process of the papers lane, so a long
LaTeX draft read for seconds leaves /healthz and a cheap call answered at once."""

from __future__ import annotations

import itertools
import statistics
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
from httputil import TOKEN, http_server, http_session, token_file
from mcputil import call

OTHER = "second-token-7e6d5c4b3a291"
# A cheap call's bound while the drafts are read: well above the 50 ms target on a
# loaded machine, far below the hundreds of milliseconds a draft read in this
# process's threads held each answer back.
HEALTH_P90_SECONDS = 0.25
HEALTH_MAX_SECONDS = 1.5


def _latex(variant: int) -> str:
    """A draft of 800 kB whose paragraphs, dense with markup, each end citing a work
    without an entry (nothing is looked up): seconds of reading, a report of 100
    citations; each draft spelled differently."""
    sentence = (
        "Glaciers retreat by {i} metres as {{\\em shown}} in \\textbf{{{v}}} and "
        "$x_{{{i}}}^2$ here. "
    )
    return "\n\n".join(
        "".join(sentence.format(i=i, v=variant) for i in range(100))
        + f" It is cited \\citep[p.~{p}]{{k{p}}}."
        for p in range(100)
    )


async def test_long_drafts_read_over_http_leave_health_and_other_tokens_answered(
    doiget_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**doiget_env, "DOIGET_HTTP_TOKENS_FILE": str(token_file(tmp_path, TOKEN, OTHER))}
    drafts = [{"text": _latex(variant), "format": "latex"} for variant in range(3)]
    answers: list[dict[str, Any]] = []
    waits: list[float] = []
    with http_server(env, tmp_path) as server:
        async with http_session(server.url) as session, http_session(server.url, OTHER) as other:
            # Each token's first call builds its cores: not what is measured.
            assert (await call(other, "doiget_health", {}))["ok"]
            small = {"text": "Ice melts \\cite{a}.", "format": "latex"}
            assert (await call(session, "doiget_audit_manuscript", small))["ok"]
            running = True

            async def audit(request: dict[str, str]) -> None:
                answers.append(await call(session, "doiget_audit_manuscript", request))

            async def audits() -> None:
                nonlocal running
                async with anyio.create_task_group() as group:
                    for request in drafts:
                        group.start_soon(audit, request)
                running = False

            async def probe() -> None:
                async with httpx.AsyncClient(timeout=60) as client:
                    for round in itertools.count():
                        if not running:
                            return
                        began = time.perf_counter()
                        assert (await client.get(f"{server.base}/healthz")).status_code == 200
                        waits.append(time.perf_counter() - began)
                        if round % 5 == 0:  # within the other token's rate of calls
                            began = time.perf_counter()
                            assert (await call(other, "doiget_health", {}))["ok"]
                            waits.append(time.perf_counter() - began)
                        await anyio.sleep(0.05)

            with anyio.fail_after(300):
                async with anyio.create_task_group() as group:
                    group.start_soon(audits)
                    group.start_soon(probe)
    read = [answer for answer in answers if answer["ok"]]
    refused = [answer for answer in answers if not answer["ok"]]
    assert read, answers
    assert all(answer["summary"]["citations"] == 100 for answer in read)
    assert all(answer["summary"]["missing"] == answer["summary"]["cited_works"] for answer in read)
    assert all(answer["error"]["code"] == "RATE_LIMITED" for answer in refused), refused
    assert len(waits) >= 4
    assert statistics.quantiles(waits, n=10)[-1] <= HEALTH_P90_SECONDS, sorted(waits)
    assert max(waits) <= HEALTH_MAX_SECONDS, sorted(waits)
