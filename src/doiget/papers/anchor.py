"""The anchor of the provenance log: a key kept away from the log signs where it ends.

A hash chain shows an edited or removed row, but not rows cut from its end, nor a
whole log replaced by a shorter consistent one: the log's own contents rebuild any
chain. So three things live outside the log's rows:

- the **key**: 32 random bytes, made on first use in the config directory (mode
  0600, created atomically) or wherever ``DOIGET_PROVENANCE_KEY_PATH`` says, never in
  the log's folder nor in the store;
- the **head** (``<log>.head``, beside the log, replaced with every row): the seq and
  hash of the newest row, the key's id, and an HMAC-SHA256 of them under the key;
- the **anchor record** (``<key>.anchors/<id of the log's path>.json``, beside the
  key): written once per log, it names a row the log must hold from then on, so a
  log deleted together with its head, or replaced by a fresh one, is still missed.

Without the key, a head or record cannot be made to match other rows. What this
cannot show (a rollback of the log, its head and its record together to an earlier
copy; anything done by someone who also holds the key) is written in docs/how-it-works/security.md.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from doiget.atomicfile import create_once, write_atomic

KEY_BYTES: Final = 32
_KEY_ID: Final = b"doiget-provenance-key-id\x00"
_HEAD: Final = b"doiget-provenance-head/1\x00"
_RECORD: Final = b"doiget-provenance-anchor/1\x00"


class AnchorError(ValueError):
    """A key, head or anchor record that is there but cannot be used."""


def head_path(log: Path) -> Path:
    """The head file of the log at ``log``."""
    return log.with_name(f"{log.name}.head")


def key_id(key: bytes) -> str:
    """A short public name of ``key`` (it reveals nothing of the key)."""
    return hmac.new(key, _KEY_ID, hashlib.sha256).hexdigest()[:16]


def _mac(key: bytes, context: bytes, fields: dict[str, Any]) -> str:
    body = json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()
    return hmac.new(key, context + body, hashlib.sha256).hexdigest()


class AnchorKey:
    """The key file at ``path``: read, or made once on first use."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> bytes | None:
        """The key, or None when there is no key file. Raises AnchorError when it is
        unusable and OSError when it cannot be read."""
        try:
            key = self.path.read_bytes()
        except FileNotFoundError:
            return None
        if len(key) != KEY_BYTES:
            raise AnchorError(
                f"the provenance key {self.path} holds {len(key)} bytes, not {KEY_BYTES}; "
                "restore the key that signed the log"
            )
        return key

    def read_or_create(self) -> bytes:
        """The key, made now (32 random bytes, mode 0600) when there is none yet."""
        key = self.read()
        if key is not None:
            return key
        create_once(self.path, os.urandom(KEY_BYTES))
        made = self.read()
        if made is None:
            raise AnchorError(f"the provenance key {self.path} vanished as it was made")
        return made

    def records(self) -> Path:
        """The folder of anchor records, beside the key."""
        return self.path.with_name(f"{self.path.name}.anchors")


@dataclass(frozen=True, slots=True)
class Head:
    """A row the log must hold: its seq and hash, signed under a key (an earlier
    release wrote heads without ``key_id`` and ``mac``)."""

    seq: int
    this_hash: str
    key_id: str | None = None
    mac: str | None = None

    @property
    def signed(self) -> bool:
        """Whether the head carries a signature (made by this release)."""
        return self.mac is not None

    def fields(self) -> dict[str, Any]:
        """What the signature covers."""
        return {"seq": self.seq, "this_hash": self.this_hash, "key_id": self.key_id}

    def problem(self, key: bytes | None, key_path: Path, *, record: bool = False) -> str | None:
        """Why this head (or anchor ``record``) cannot be trusted under ``key`` (None
        when it can)."""
        what = "anchor record" if record else "head file"
        if key is None:
            return (
                f"the {what} is signed with key {self.key_id}, but there is no key at "
                f"{key_path}: restore that key, or point DOIGET_PROVENANCE_KEY_PATH at it"
            )
        if self.key_id != key_id(key):
            return (
                f"the {what} is signed with key {self.key_id}, not with the key at {key_path} "
                f"({key_id(key)}): point DOIGET_PROVENANCE_KEY_PATH at the key that signed it"
            )
        expected = _mac(key, _RECORD if record else _HEAD, self.fields())
        if self.mac is None or not hmac.compare_digest(self.mac, expected):
            return f"the {what}'s signature does not verify: it was written without the key"
        return None


def _signed(key: bytes, seq: int, this_hash: str, context: bytes) -> Head:
    unsigned = Head(seq, this_hash, key_id(key))
    return Head(seq, this_hash, unsigned.key_id, _mac(key, context, unsigned.fields()))


def _read(path: Path, what: str) -> Head | None:
    try:
        data = json.loads(path.read_bytes())
        kid, mac = data.get("key_id"), data.get("mac")
        return Head(
            int(data["seq"]),
            str(data["this_hash"]),
            None if kid is None else str(kid),
            None if mac is None else str(mac),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise AnchorError(f"the {what} {path} is unreadable ({exc})") from exc


def _dump(head: Head, **extra: str) -> bytes:
    body = {**extra, **head.fields(), "mac": head.mac}
    return json.dumps(body).encode() + b"\n"


def read_head(log: Path) -> Head | None:
    """The head of ``log`` (None when there is no head file); AnchorError when unreadable."""
    return _read(head_path(log), "head file")


def write_head(log: Path, key: bytes, seq: int, this_hash: str) -> None:
    """Replace the head of ``log`` (atomically) with row ``seq``, signed."""
    write_atomic(head_path(log), _dump(_signed(key, seq, this_hash, _HEAD)))


def record_path(key: AnchorKey, log: Path) -> Path:
    """The anchor record of ``log``: named by the log's full path, beside the key."""
    name = hashlib.sha256(str(log.resolve()).encode()).hexdigest()[:32]
    return key.records() / f"{name}.json"


def read_record(key: AnchorKey, log: Path) -> Head | None:
    """The row ``log`` was anchored at (None when it never was, as far as this key's
    folder knows); AnchorError when the record is unreadable."""
    return _read(record_path(key, log), "anchor record")


def write_record(key_file: AnchorKey, key: bytes, log: Path, seq: int, this_hash: str) -> None:
    """Record, once, that ``log`` holds row ``seq`` (an existing record is kept)."""
    record = _signed(key, seq, this_hash, _RECORD)
    create_once(record_path(key_file, log), _dump(record, log=str(log.resolve())))
