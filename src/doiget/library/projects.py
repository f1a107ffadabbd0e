"""Projects: named passage collections, configured in config.toml's ``[projects]`` table.

One project always exists: ``doiget/papers`` (:data:`DEFAULT_PROJECT_ID`), for the
papers in the store, with the default settings (hybrid on), so an agent can index
and query with no one configuring anything. Configuring it in ``[projects]``
replaces those settings.

``[projects."ns/name"]`` holds collection, embed_model, hybrid_enabled,
max_chars_per_chunk, top_k_max, chunk_tokens and chunk_overlap; every key but the
table name is optional. ``doiget projects add|remove`` rewrite the file atomically
(comments in it are not kept; every setting is).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from filelock import FileLock

from doiget.diskerror import write_error
from doiget.errors import DoigetError, ErrorCode, quoted

DEFAULT_EMBED_MODEL: Final = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_MAX_CHARS: Final = 1800
DEFAULT_TOP_K: Final = 6
TOP_K_CEILING: Final = 20
DEFAULT_CHUNK_TOKENS: Final = 200
DEFAULT_CHUNK_OVERLAP: Final = 32
# Model tokens per chunk: MiniLM reads at most 256 word pieces, so larger chunks
# would be cut before they are embedded.
CHUNK_TOKENS_RANGE: Final = (32, 512)
PROJECT_ID: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}/[a-z0-9][a-z0-9._-]{0,63}")
PROJECT_ID_HINT: Final = "'namespace/name': lower-case letters, digits, '.', '_' or '-'"
DEFAULT_PROJECT_ID: Final = "doiget/papers"


@dataclass(frozen=True, slots=True)
class Project:
    """One project's settings."""

    id: str
    collection: str
    embed_model: str = DEFAULT_EMBED_MODEL
    hybrid_enabled: bool = True
    max_chars_per_chunk: int = DEFAULT_MAX_CHARS
    top_k_max: int = TOP_K_CEILING
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP

    def to_table(self) -> dict[str, Any]:
        """The TOML table of this project (without its id, which is the table's name)."""
        table = asdict(self)
        del table["id"]
        return table


def default_collection(project_id: str) -> str:
    """``proj-ns-name`` for ``ns/name``."""
    return "proj-" + re.sub(r"[^a-z0-9]+", "-", project_id).strip("-")


def _invalid(message: str) -> DoigetError:
    return DoigetError(ErrorCode.CAPABILITY_DENIED, message)


def check_project_id(project_id: str) -> str:
    """``project_id`` when well formed; INVALID_PROJECT otherwise."""
    if not PROJECT_ID.fullmatch(project_id):
        raise DoigetError(
            ErrorCode.INVALID_PROJECT,
            f"{quoted(project_id)} is not a project id; use {PROJECT_ID_HINT}.",
        )
    return project_id


def _int(table: Mapping[str, Any], key: str, default: int, low: int, high: int, where: str) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _invalid(f"{where} {key} must be an integer from {low} to {high}.")
    return value


def project_from_table(project_id: str, table: Any, where: str) -> Project:
    """Validate one ``[projects."id"]`` table; a bad value refuses the start."""
    if not PROJECT_ID.fullmatch(project_id):
        raise _invalid(f"{where}: project id {quoted(project_id)} must be {PROJECT_ID_HINT}.")
    if not isinstance(table, dict):
        raise _invalid(f"{where} must be a table.")
    place = f'{where} [projects."{project_id}"]'
    known = set(Project.__dataclass_fields__) - {"id"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise _invalid(f"{place} has unknown keys {unknown}; known: {sorted(known)}.")
    collection = table.get("collection", default_collection(project_id))
    model = table.get("embed_model", DEFAULT_EMBED_MODEL)
    hybrid = table.get("hybrid_enabled", True)
    if not isinstance(collection, str) or not re.fullmatch(r"[A-Za-z0-9][\w.-]{0,127}", collection):
        raise _invalid(f"{place} collection must be letters, digits, '.', '_' or '-'.")
    if not isinstance(model, str) or not model.strip():
        raise _invalid(f"{place} embed_model must be a model name.")
    if not isinstance(hybrid, bool):
        raise _invalid(f"{place} hybrid_enabled must be true or false.")
    tokens = _int(table, "chunk_tokens", DEFAULT_CHUNK_TOKENS, *CHUNK_TOKENS_RANGE, place)
    return Project(
        id=project_id,
        collection=collection,
        embed_model=model,
        hybrid_enabled=hybrid,
        max_chars_per_chunk=_int(
            table, "max_chars_per_chunk", DEFAULT_MAX_CHARS, 200, 20_000, place
        ),
        top_k_max=_int(table, "top_k_max", TOP_K_CEILING, 1, TOP_K_CEILING, place),
        chunk_tokens=tokens,
        chunk_overlap=_int(table, "chunk_overlap", DEFAULT_CHUNK_OVERLAP, 0, tokens // 2, place),
    )


def new_project(project_id: str) -> Project:
    """A project with the default settings (check the id first)."""
    return Project(id=project_id, collection=default_collection(project_id))


def projects_from_config(table: Any, where: str) -> dict[str, Project]:
    """Every project of a config file's ``[projects]`` table, by id, plus the default
    project when the file does not configure it."""
    if table is None:
        table = {}
    if not isinstance(table, dict):
        raise _invalid(f'[projects] in {where} must hold tables like [projects."ns/name"].')
    projects = {pid: project_from_table(pid, body, where) for pid, body in table.items()}
    projects.setdefault(DEFAULT_PROJECT_ID, new_project(DEFAULT_PROJECT_ID))
    collections = [project.collection for project in projects.values()]
    duplicates = sorted({name for name in collections if collections.count(name) > 1})
    if duplicates:
        raise _invalid(f"{where}: projects share collection(s) {duplicates}; give each its own.")
    return projects


def _read(config_path: Path) -> dict[str, Any]:
    try:
        with config_path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise _invalid(f"cannot read {config_path} ({exc}); fix or remove it.") from exc


def _write(config_path: Path, document: dict[str, Any]) -> None:
    import tomli_w

    from doiget.atomicfile import write_atomic

    try:
        write_atomic(config_path, tomli_w.dumps(document).encode("utf-8"))
    except OSError as exc:
        raise _unwritable(config_path, exc) from exc


def _unwritable(config_path: Path, exc: OSError) -> DoigetError:
    return write_error(ErrorCode.STORE_ERROR, "write", config_path, exc, "DOIGET_CONFIG")


def _editing(config_path: Path) -> FileLock:
    """The lock that makes read-modify-write of the config file one step across
    processes (two servers creating projects at once both keep theirs)."""
    try:
        config_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable(config_path, exc) from exc
    return FileLock(f"{config_path}.lock")


def save_project(config_path: Path, project: Project) -> None:
    """Add or replace ``project`` in the config file."""
    with _editing(config_path):
        document = _read(config_path)
        table = document.setdefault("projects", {})
        projects_from_config(table | {project.id: project.to_table()}, str(config_path))
        table[project.id] = project.to_table()
        _write(config_path, document)


def delete_project(config_path: Path, project_id: str) -> bool:
    """Remove ``project_id`` from the config file; False when it was not there."""
    with _editing(config_path):
        return _delete(config_path, project_id)


def _delete(config_path: Path, project_id: str) -> bool:
    document = _read(config_path)
    table = document.get("projects")
    if not isinstance(table, dict) or project_id not in table:
        return False
    del table[project_id]
    _write(config_path, document)
    return True
