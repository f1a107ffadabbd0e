"""What the last sync of a Zotero library left: the library version it reached and,
per item key, the item's version and what became of it.

One JSON file per library (and per collection synced on its own) under
``<data dir>/zotero/``, written whole (temp file, fsync, rename; mode 0600). A file
that cannot be read is a coded error telling the user to move it aside: syncing
without it would store every item again, not lose anything.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from doiget.atomicfile import write_atomic
from doiget.errors import DoigetError, ErrorCode

SCHEMA: Final = 1
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]+")

# stored: a work doiget holds (``ref``); not_identified: no work found (not retried
# until the item changes); pdf: a PDF attachment added (its SHA-256 in ``pdfs``);
# other: a note, an annotation, another attachment, or an item outside the collection.
ItemStatus = Literal["stored", "not_identified", "pdf", "other"]


@dataclass(slots=True)
class ItemState:
    version: int
    status: ItemStatus
    ref: str | None = None
    pdfs: list[str] = field(default_factory=list)
    parent: str | None = None


@dataclass(slots=True)
class SyncState:
    library: str
    collection: str | None = None
    version: int | None = None
    items: dict[str, ItemState] = field(default_factory=dict)


def state_path(data_dir: Path, library: str, local: bool, collection: str | None) -> Path:
    """Where the state of ``library`` (one collection of it, when given) is kept."""
    name = _UNSAFE.sub("_", library) + ("-local" if local else "")
    if collection:
        name += "--" + _UNSAFE.sub("_", collection)
    return data_dir / "zotero" / f"{name}.json"


def synced_refs(data_dir: Path, library: str, local: bool) -> dict[str, str]:
    """The doiget ref of each item a sync of ``library`` stored (the whole library's and
    each collection's state), by Zotero key; empty before the first sync."""
    whole = state_path(data_dir, library, local, None)
    paths = [whole, *sorted(whole.parent.glob(f"{whole.stem}--*.json"))]
    refs: dict[str, str] = {}
    for path in paths:
        for key, item in load(path, library, None).items.items():
            if item.ref and item.status == "stored":
                refs.setdefault(key, item.ref)
    return refs


def _item(raw: Any) -> ItemState:
    return ItemState(
        version=int(raw["version"]),
        status=raw["status"],
        ref=raw.get("ref"),
        pdfs=[str(sha) for sha in raw.get("pdfs", [])],
        parent=raw.get("parent"),
    )


def load(path: Path, library: str, collection: str | None) -> SyncState:
    """The state at ``path``; an empty one when no sync ran yet."""
    try:
        raw = json.loads(path.read_bytes())
        items = {str(key): _item(value) for key, value in raw.get("items", {}).items()}
        version = raw.get("version")
        return SyncState(library, collection, None if version is None else int(version), items)
    except FileNotFoundError:
        return SyncState(library, collection)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DoigetError(
            ErrorCode.STORE_ERROR,
            f"the Zotero sync state {path} cannot be read ({type(exc).__name__}); move it "
            "aside and sync again (every item is then checked again; nothing is lost).",
        ) from exc


def save(path: Path, state: SyncState) -> None:
    """Write ``state`` whole (readers see the old file or the new one)."""
    items = {
        key: {name: value for name, value in asdict(item).items() if value not in (None, [])}
        for key, item in state.items.items()
    }
    document = {
        "schema": SCHEMA,
        "library": state.library,
        "collection": state.collection,
        "version": state.version,
        "items": items,
    }
    try:
        write_atomic(path, json.dumps(document, ensure_ascii=False).encode("utf-8"))
    except OSError as exc:
        from doiget.diskerror import write_error

        raise write_error(
            ErrorCode.STORE_ERROR, "write the Zotero sync state", path, exc, "DOIGET_DATA_DIR"
        ) from exc
