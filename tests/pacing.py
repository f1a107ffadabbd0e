"""Request spacing off, for tests whose subject is not the spacing: arXiv's 3 s and
DBLP's 1 s between two requests, and 5 requests a second in all, would otherwise be
most of the time of a test whose sources are asked again and again. The spacing
itself is tested with it on (tests/integration/test_net_gates.py).

``unpace`` turns it off in this process (the ``unpaced`` fixture); ``unpaced_env``
gives a doiget process a test starts the folder whose sitecustomize does the same.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from doiget.net import ratelimit

_SHIM = Path(__file__).resolve().parent / "unpaced"


def _no_gap(source: str, *, keyed: bool = False) -> float:
    return 0.0


def unpace(set_attribute: Callable[[Any, str, Any], None] = setattr) -> None:
    """No per-source gap and no per-second budget at the rate gate, set with
    ``set_attribute`` (a test's monkeypatch undoes it when the test ends)."""
    set_attribute(ratelimit, "min_gap_seconds", _no_gap)
    unlimited = replace(ratelimit.HARD_CODED, max_fetches_per_second=1000.0)
    set_attribute(ratelimit, "HARD_CODED", unlimited)


def unpaced_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a doiget process that spaces its requests by no gap."""
    paths = [str(_SHIM), env.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))]
    return {**env, "PYTHONPATH": os.pathsep.join(path for path in paths if path)}
