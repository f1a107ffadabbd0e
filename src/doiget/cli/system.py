"""``doiget capabilities`` and ``doiget health``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from doiget.capability import TDM_INSTALL, CapabilityProfile
from doiget.capabilityreport import capability_report
from doiget.cli.output import (
    JsonFlag,
    console,
    emit_json,
    handles_errors,
    report_error,
    runtime,
    table,
    wants_json,
)
from doiget.config import KNOWN_TOOLSETS, Settings
from doiget.errors import DoigetError, ErrorCode
from doiget.health import check_health
from doiget.installed import browser_state, servable
from doiget.net.ratelimit import min_gap_seconds
from doiget.upstreams import Gate, Role, Upstream, all_upstreams
from doiget.upstreams.limits import HARD_CODED
from doiget.zotero.status import zotero_state

if TYPE_CHECKING:
    from doiget.runtime import Runtime


def _rate(gap_s: float) -> str:
    return f"1 per {gap_s:g} s" if gap_s > 1 else f"{1 / gap_s:g}/s"


def _ceiling(upstream: Upstream) -> tuple[str, str | None]:
    """The request ceiling kept for ``upstream``, and the keyed one when a key raises it."""
    if upstream.role is Role.SERVICE:
        return "its own client", None
    plain = min_gap_seconds(upstream.name)
    keyed = min_gap_seconds(upstream.name, keyed=True)
    if upstream.keyed_by is None or keyed == plain:
        return _rate(plain), None
    return _rate(plain), f"{_rate(keyed)} with {upstream.keyed_by}"


def _state(
    upstream: Upstream, profile: CapabilityProfile, settings: Settings
) -> tuple[str, str | None]:
    """Whether this process may use ``upstream``, and what to set or run when it may not."""
    if upstream.gate is Gate.OPT_IN:
        if profile.metadata.allows(upstream.name):
            return "enabled", None
        return "off", f"set {upstream.opt_in_var} to enable"
    if upstream.gate is Gate.TDM:
        data = profile.to_redacted_dict()
        agreed = data["tdm_agreed_at"].get(upstream.name)
        if agreed is None:
            return "not granted", None
        if upstream.name in data["tdm_not_installed"]:
            return "granted, not installed", f"agreed {agreed}; run {TDM_INSTALL}"
        return "granted", f"agreed {agreed}"
    missing = [env for env in upstream.required if settings.value(env) is None]
    if missing:
        return "not configured", f"set {' and '.join(missing)}"
    return "on", None


@handles_errors
def capabilities(ctx: typer.Context, json_output: JsonFlag = False) -> None:
    """Show which sources this instance may use and the rate limits it keeps."""
    profile = runtime(ctx).profile
    if wants_json(ctx, json_output):
        emit_json({"ok": True, **capability_report(runtime(ctx))})  # as the tool
        return
    settings = runtime(ctx).settings
    data = profile.to_redacted_dict()
    summary = table("what", "state", title="doiget capabilities")
    summary.add_row("Open Access retrieval", "on (always)")
    summary.add_row(
        "contact email (Unpaywall)",
        "set"
        if settings.email
        else "not set: Unpaywall, the main source of OA links, is skipped (set DOIGET_EMAIL)",
    )
    summary.add_row("data directory", str(settings.data_dir))
    summary.add_row(
        "config file",
        f"{settings.config_path}{'' if settings.config_path.is_file() else ' (not present)'}",
    )
    summary.add_row("metadata sources", ", ".join(data["metadata_sources"]) or "none enabled")
    summary.add_row(
        "rate limits",
        f"{HARD_CODED.max_concurrent_fetches} in flight, "
        f"{HARD_CODED.max_fetches_per_second:g}/s total, "
        f"{HARD_CODED.per_source_backoff_ms} ms between requests to one source",
    )
    upstreams = table("upstream", "name", "state", "ceiling", "toolsets", title="upstreams")
    notes: list[str] = []
    for upstream in all_upstreams():
        state, to_do = _state(upstream, profile, settings)
        ceiling, keyed = _ceiling(upstream)
        upstreams.add_row(
            upstream.label,
            upstream.name,
            state + (" *" if to_do else ""),
            ceiling + (" *" if keyed else ""),
            ", ".join(upstream.toolsets),
        )
        notes += [f"* {upstream.name}: {note}" for note in (to_do, keyed) if note]
    browser = browser_state(settings.browser).describe()
    summary.add_row("scrape_page browser tier", browser)
    zotero = zotero_state(settings)
    summary.add_row(
        "Zotero",
        f"{zotero['library']}, writes {zotero['writes']}" if zotero["configured"] else "not set",
    )
    _, off = servable(KNOWN_TOOLSETS, settings)
    for name in KNOWN_TOOLSETS:
        state = f"off: it {off[name]}" if name in off else "can be served"
        if name not in settings.toolsets:
            state += "; not in the selection served (name it in DOIGET_TOOLSETS or --toolsets)"
        summary.add_row(f"{name} toolset", state)
    out = console()
    out.print(summary)
    out.print(upstreams)
    # Setting names and commands go under the table, where lines wrap between words:
    # a table cell at 80 columns would split them, and a split name copied is wrong.
    for note in notes:
        out.print(note)


def _remote_health(shared: Runtime) -> dict[str, Any]:
    """Whether Zotero answers and, with OAuth on, whether the identity provider's
    signing keys can be fetched (one short check each)."""
    import anyio

    from doiget.zotero.status import zotero_health

    async def check() -> dict[str, Any]:
        try:
            found = {"zotero": await zotero_health(shared)}
            oauth = shared.settings.http.oauth
            if oauth is not None:
                from doiget.oauthkeys import provider_health

                found["identity_provider"] = await provider_health(oauth.issuer, shared.network())
            return found
        finally:
            await shared.aclose()

    return anyio.run(check)


@handles_errors
def health(ctx: typer.Context, json_output: JsonFlag = False) -> None:
    """Check that the store and log are writable; show version, schema and unreadable entries."""
    report = check_health(runtime(ctx).settings, library=True)
    report.update(_remote_health(runtime(ctx)))
    if wants_json(ctx, json_output):
        emit_json(report)
    else:
        grid = table("check", "state", title="doiget health", show_header=False)
        for key, value in report.items():
            grid.add_row(key, ", ".join(value) if isinstance(value, list) else str(value))
        console().print(grid)
    if not report["ok"]:
        problem = DoigetError(
            ErrorCode.STORE_ERROR,
            "; ".join(report.get("problems", [])) + ": fix permissions or point "
            "DOIGET_STORE_ROOT / DOIGET_LOG_PATH at writable places.",
        )
        # The report printed above is what doiget_health returns: say why on stderr.
        report_error(problem, as_json=False)
        raise typer.Exit(problem.exit_status)
