"""The upstream registry is the one source of allowlists, ceilings and redaction.

Every declaration is walked: each secret it declares is kept out of logs, errors and
provenance rows through the real network against the replay upstream; each host it
declares is on its own allowlist and on no other; each upstream has a ceiling. A
declaration registered here, and nowhere else, shows up everywhere it should.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from doiget.capability import CapabilityProfile
from doiget.config import load_settings, secret_values, settings_table_markdown
from doiget.errors import DoigetError
from doiget.net.allowlist import DOI_RESOLVERS, allowlist_for, host_matches
from doiget.net.ratelimit import min_gap_seconds
from doiget.net.redact import redact_url
from doiget.papers.provenance import ProvenanceLog
from doiget.upstreams import (
    Carrier,
    Gate,
    Redaction,
    Role,
    Setting,
    Upstream,
    all_upstreams,
    register,
    registry,
)
from doiget.upstreams.limits import HARD_CODED
from logcheck import key_for

from netutil import make_network
from replay import ReplayUpstream, Reply

SECRETS = [
    (upstream, setting)
    for upstream in all_upstreams()
    for setting in upstream.settings
    if setting.redaction is not Redaction.NONE
]


def _canary(setting: Setting) -> str:
    return f"canary{setting.env.lower().replace('_', '')}7f3a9c"


def _env_value(setting: Setting, canary: str) -> str:
    if setting.redaction is Redaction.USERINFO and setting.env == "REDIS_URL":
        return f"redis://:{canary}@127.0.0.1:6379/0"
    if setting.redaction is Redaction.USERINFO:
        return f"https://user:{canary}@127.0.0.1:9/"
    return canary


def _request_host(upstream: Upstream, replay: ReplayUpstream) -> tuple[str, str]:
    """The source and host to send the canary to: the upstream's own when the replay
    server impersonates it, else Crossref's (every client redacts every secret)."""
    for host in upstream.hosts:
        if host in replay.hosts:
            return upstream.name, host
    return "crossref", "api.crossref.org"


def test_every_secret_setting_is_declared_with_its_carrier() -> None:
    assert SECRETS, "no upstream declares a secret"
    for upstream, setting in SECRETS:
        assert setting.carrier is not None, f"{upstream.name} {setting.env} has no carrier"
        if setting.carrier in (Carrier.HEADER, Carrier.QUERY):
            assert setting.carried_as, f"{upstream.name} {setting.env} names no header/param"


@pytest.mark.parametrize(
    ("declared", "setting"), SECRETS, ids=[f"{u.name}-{s.env}" for u, s in SECRETS]
)
async def test_every_declared_secret_stays_out_of_logs_errors_and_provenance(
    declared: Upstream,
    setting: Setting,
    upstream: ReplayUpstream,
    doiget_env: dict[str, str],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    canary = _canary(setting)
    settings = load_settings({**doiget_env, setting.env: _env_value(setting, canary)})
    assert canary in secret_values(settings)
    if setting.redaction is Redaction.VALUE:
        assert canary not in repr(settings)
    source, host = _request_host(declared, upstream)
    upstream.route(host, "/echo", Reply(400, f'{{"error": "bad key {canary}"}}'.encode()))
    url = f"https://{host}/echo"
    params: dict[str, str] = {}
    headers: dict[str, str] = {}
    if setting.carrier is Carrier.QUERY:
        params[setting.carried_as or "key"] = canary
    elif setting.carrier is Carrier.HEADER:
        headers[setting.carried_as or "Authorization"] = canary
    elif setting.carrier is Carrier.USERINFO:
        url = f"https://user:{canary}@{host}/echo"
    else:
        params["q"] = canary
    caplog.set_level(logging.DEBUG)
    network = make_network({**doiget_env, setting.env: _env_value(setting, canary)})
    try:
        with pytest.raises(DoigetError) as caught:
            await network.client(source).get(url, params=params, headers=headers)
    finally:
        await network.aclose()
    assert upstream.requests_to(host), "the request never reached the upstream"
    error = caught.value
    log = ProvenanceLog(tmp_path / "provenance.jsonl", key_for(tmp_path / "provenance.jsonl"))
    log.append(
        "fetch",
        source=source,
        result="err",
        error_code=error.code.value,
        detail=error.message,
    )
    log.close()
    rows = (tmp_path / "provenance.jsonl").read_text()
    assert canary not in error.message
    assert canary not in json.dumps(error.details or {})
    assert canary not in json.dumps(error.denial.to_dict() if error.denial else {})
    assert canary not in rows
    for record in caplog.records:
        assert canary not in record.getMessage(), record.getMessage()


def test_every_declared_host_is_on_its_own_allowlist_and_no_other() -> None:
    upstreams = all_upstreams()
    for upstream in upstreams:
        allowlist = allowlist_for(upstream.name)
        assert allowlist.patterns == upstream.hosts
        for host in (pattern.removeprefix("*.") for pattern in upstream.hosts):
            assert allowlist.allows(host)
            for other in upstreams:
                declared = host in DOI_RESOLVERS or any(
                    host_matches(host, pattern) for pattern in other.hosts
                )
                assert allowlist_for(other.name).allows(host) is declared, (host, other.name)


def test_every_upstream_has_a_rate_ceiling_no_looser_than_the_hard_limit() -> None:
    floor = HARD_CODED.per_source_backoff_ms / 1000
    for upstream in all_upstreams():
        for keyed in (False, True):
            gap = min_gap_seconds(upstream.name, keyed=keyed)
            assert gap >= floor
            assert gap >= upstream.gap_seconds(keyed=keyed)


def test_names_are_unique_and_roles_are_consistent() -> None:
    upstreams = all_upstreams()
    assert len({u.name for u in upstreams}) == len(upstreams)
    for upstream in upstreams:
        if upstream.gate is Gate.OPT_IN:
            assert upstream.opt_in_var and upstream.opt_in_var.startswith("DOIGET_ENABLE_")
        if upstream.endpoint is not None:
            assert upstream.setting(upstream.endpoint).required


def test_the_settings_table_lists_every_declared_variable() -> None:
    table = settings_table_markdown()
    for upstream in all_upstreams():
        for setting in upstream.settings:
            line = next(row for row in table.splitlines() if f"`{setting.env}`" in row)
            assert ("| yes |" in line or "password" in line) is setting.secret


# -- a declaration added in one place shows up everywhere ---------------------------

FAKE = Upstream(
    name="fakeindex",
    label="Fake Index",
    role=Role.SCHOLARLY,
    hosts=("api.fakeindex.example",),
    min_gap_s=2.0,
    keyed_min_gap_s=0.5,
    keyed_by="FAKEINDEX_TOKEN",
    toolsets=("papers",),
    gate=Gate.OPT_IN,
    opt_in_var="DOIGET_ENABLE_FAKEINDEX",
    settings=(
        Setting(
            "FAKEINDEX_TOKEN",
            "Fake Index token",
            redaction=Redaction.VALUE,
            carrier=Carrier.QUERY,
            carried_as="fake_token",
        ),
    ),
)


@pytest.fixture
def fake_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[Upstream]:
    all_upstreams()  # fill the registry first, so the fake is one more entry
    monkeypatch.setattr(registry, "_declared", dict(registry._declared))
    monkeypatch.setattr(registry, "_origin", dict(registry._origin))
    yield register(FAKE)


def test_a_new_declaration_reaches_allowlists_limits_redaction_and_capability(
    fake_registered: Upstream, doiget_env: dict[str, str]
) -> None:
    assert allowlist_for("fakeindex").allows("api.fakeindex.example")
    assert not allowlist_for("crossref").allows("api.fakeindex.example")
    assert min_gap_seconds("fakeindex") == 2.0
    assert min_gap_seconds("fakeindex", keyed=True) == 0.5
    canary = "fakeindexcanary0042"
    settings = load_settings({**doiget_env, "FAKEINDEX_TOKEN": canary})
    assert canary in secret_values(settings)
    assert canary not in redact_url(f"https://api.fakeindex.example/w?fake_token={canary}")
    network = make_network({**doiget_env, "FAKEINDEX_TOKEN": canary})
    assert "fakeindex" in network.limiter._keyed
    profile = CapabilityProfile.from_env({"DOIGET_ENABLE_FAKEINDEX": ""})
    assert profile.metadata.enabled() == ["fakeindex"]
    assert "`FAKEINDEX_TOKEN`" in settings_table_markdown()
    assert "DOIGET_ENABLE_FAKEINDEX" in settings_table_markdown()


def test_a_new_declaration_shows_in_the_capabilities_command(
    fake_registered: Upstream, doiget_env: dict[str, str]
) -> None:
    from doiget.cli.main import app

    result = CliRunner().invoke(
        app, ["capabilities"], env={**doiget_env, "COLUMNS": "200"}, catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "Fake Index" in line)
    assert "fakeindex" in row and "off *" in row and "1 per 2 s" in row
    assert "* fakeindex: set DOIGET_ENABLE_FAKEINDEX to enable" in result.output.splitlines()
