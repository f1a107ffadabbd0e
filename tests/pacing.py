"""Request spacing off, for tests whose subject is not the spacing: arXiv's 3 s and
DBLP's 1 s between two requests, 5 requests a second in all, and retries half a
second, then one, then two apart would otherwise be most of the time of a test whose
sources are asked again and again or fail. The spacing itself is tested with it on
(tests/integration/test_net_gates.py, test_net_retries_and_limits.py).

``unpace`` turns it off in this process (the ``unpaced`` fixture); ``unpaced_env``
gives a doiget process a test starts the folder whose sitecustomize does the same.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from doiget.net import network, ratelimit
from doiget.net.client import RetryPolicy

_SHIM = Path(__file__).resolve().parent / "unpaced"


def _no_gap(source: str, *, keyed: bool = False) -> float:
    return 0.0


def unpace(set_attribute: Callable[[Any, str, Any], None] = setattr) -> None:
    """No per-source gap and no per-second budget at the rate gate, and retries from
    a 50 ms backoff (the real shape, as netutil.FAST_RETRY), set with ``set_attribute``
    (a test's monkeypatch undoes it when the test ends)."""
    set_attribute(ratelimit, "min_gap_seconds", _no_gap)
    unlimited = replace(ratelimit.HARD_CODED, max_fetches_per_second=1000.0)
    set_attribute(ratelimit, "HARD_CODED", unlimited)
    set_attribute(network, "RetryPolicy", partial(RetryPolicy, base_delay=0.05))


def unpaced_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a doiget process that spaces its requests by no gap."""
    paths = [str(_SHIM), env.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))]
    return {**env, "PYTHONPATH": os.pathsep.join(path for path in paths if path)}
