"""``doiget capabilities`` and ``doiget health``."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from doiget.capability import TDM_PUBLISHERS
from doiget.cli.output import JSON_OPTION_HELP, emit_json, handles_errors, runtime, wants_json
from doiget.errors import DoigetError, ErrorCode
from doiget.health import check_health
from doiget.net.ratelimit import HARD_CODED, min_gap_seconds

JsonFlag = Annotated[bool, typer.Option("--json", help=JSON_OPTION_HELP)]


@handles_errors
def capabilities(ctx: typer.Context, json_output: JsonFlag = False) -> None:
    """Show which sources this instance may use and the rate limits it keeps."""
    profile = runtime(ctx).profile
    if wants_json(ctx, json_output):
        emit_json(profile.to_redacted_dict())
        return
    data = profile.to_redacted_dict()
    table = Table(title="doiget capabilities", show_header=True)
    table.add_column("what")
    table.add_column("state")
    table.add_row("Open Access retrieval", "on (always)")
    table.add_row("metadata sources", ", ".join(data["metadata_sources"]) or "none enabled")
    for publisher in TDM_PUBLISHERS:
        agreed = data["tdm_agreed_at"].get(publisher)
        table.add_row(f"TDM {publisher}", f"granted (agreed {agreed})" if agreed else "not granted")
    table.add_row(
        "rate limits",
        f"{HARD_CODED.max_concurrent_fetches} in flight, "
        f"{HARD_CODED.max_fetches_per_second:g}/s total, "
        f"{HARD_CODED.per_source_backoff_ms} ms between requests to one source",
    )
    table.add_row(
        "upstream ceilings",
        f"arXiv 1 per {min_gap_seconds('arxiv'):g} s, Semantic Scholar 1/s, PubMed 3/s",
    )
    Console().print(table)


@handles_errors
def health(ctx: typer.Context, json_output: JsonFlag = False) -> None:
    """Check that the store and log are writable; show version and schema."""
    report = check_health(runtime(ctx).settings)
    if wants_json(ctx, json_output):
        emit_json(report)
    else:
        table = Table(title="doiget health", show_header=False)
        for key, value in report.items():
            table.add_row(key, ", ".join(value) if isinstance(value, list) else str(value))
        Console().print(table)
    if not report["ok"]:
        raise DoigetError(
            ErrorCode.STORE_ERROR,
            "; ".join(report.get("problems", [])) + ": fix permissions or point "
            "DOIGET_STORE_ROOT / DOIGET_LOG_PATH at writable places.",
        )
