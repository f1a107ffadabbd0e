"""Reading one setting's value: the refusal a value that cannot be used gets, and the
number parsers every settings module shares."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from doiget.errors import DoigetError, ErrorCode, quoted


def refuse(message: str) -> DoigetError:
    """A setting that cannot be honoured: doiget does not start with it."""
    return DoigetError(ErrorCode.INVALID_CONFIG, message)


def seconds_setting(var: str, raw: Any, default: float, most: float) -> float:
    """A number of seconds above 0 and at most ``most``, or ``default`` when unset."""
    if raw is None:
        return default
    try:
        value = float(raw)
    except (TypeError, ValueError):
        value = 0.0
    if not 0 < value <= most:
        raise refuse(
            f"{var}={quoted(raw)}; give a number of seconds above 0 and at most {most:.0f}."
        )
    return value


def whole_setting(var: str, raw: Any, default: int, low: int, high: int) -> int:
    """A whole number from ``low`` to ``high``, or ``default`` when unset."""
    if raw in (None, ""):
        return default
    try:
        value = int(str(raw))
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise refuse(f"{var}={quoted(raw)}; use a whole number from {low} to {high}.")
    return value


def path_setting(var: str, raw: Any, *, folder: bool, wanted: str) -> Path | None:
    """An existing file (or folder) named by ``raw``, or None when unset; ``wanted``
    says what it should be, for the refusal."""
    if raw in (None, ""):
        return None
    path = Path(str(raw)).expanduser()
    if not (path.is_dir() if folder else path.is_file()):
        kind = "folder" if folder else "file"
        raise refuse(f"{var}={raw} is not a {kind}; point it at {wanted} or unset it.")
    return path
