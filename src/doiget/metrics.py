"""Counters and timings for operators, in Prometheus' format; off unless switched on.

``doiget serve --http`` with ``DOIGET_HTTP_METRICS=1`` turns them on and serves them
at ``/metrics`` (behind the same bearer tokens as ``/mcp``). Otherwise every call here
returns at once: prometheus-client is imported only when metrics are on.

What is counted: tool calls by tool and outcome (and their duration), upstream
requests by source and outcome, time spent waiting for the rate gate by source, and
cache lookups by cache and result.
"""

from __future__ import annotations

from typing import Any, Final

from doiget.errors import DoigetError, ErrorCode

_metrics: dict[str, Any] = {}
_registry: Any = None

_LABELS: Final[dict[str, tuple[str, ...]]] = {
    "tool_calls": ("tool", "outcome"),
    "upstream_requests": ("source", "outcome"),
    "cache_lookups": ("cache", "result"),
}
_TIMINGS: Final[dict[str, tuple[str, ...]]] = {
    "tool_call_seconds": ("tool",),
    "rate_limit_wait_seconds": ("source",),
}


def enable() -> None:
    """Start counting (once per process)."""
    global _registry
    if _registry is not None:
        return
    try:
        from prometheus_client import CollectorRegistry, Counter, Histogram
    except ImportError as exc:
        raise DoigetError(
            ErrorCode.INVALID_CONFIG,
            "DOIGET_HTTP_METRICS=1 needs prometheus-client: pip install -e '.[metrics]' in "
            "the doiget checkout, or unset DOIGET_HTTP_METRICS.",
        ) from exc

    _registry = CollectorRegistry()
    for name, labels in _LABELS.items():
        _metrics[name] = Counter(
            f"doiget_{name}", name.replace("_", " "), labels, registry=_registry
        )
    for name, labels in _TIMINGS.items():
        _metrics[name] = Histogram(
            f"doiget_{name}", name.replace("_", " "), labels, registry=_registry
        )


def count(name: str, **labels: str) -> None:
    """Add one to counter ``name`` (nothing when metrics are off)."""
    metric = _metrics.get(name)
    if metric is not None:
        metric.labels(**labels).inc()


def observe(name: str, seconds: float, **labels: str) -> None:
    """Record a duration in timing ``name`` (nothing when metrics are off)."""
    metric = _metrics.get(name)
    if metric is not None:
        metric.labels(**labels).observe(seconds)


def exposition() -> tuple[bytes, str]:
    """The current values in Prometheus' text format, and its content type."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    if _registry is None:
        return b"", CONTENT_TYPE_LATEST
    return generate_latest(_registry), CONTENT_TYPE_LATEST
