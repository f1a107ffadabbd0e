"""Reading one setting's value: the refusal a value that cannot be used gets, and the
number and on/off parsers every settings module shares."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

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


# The words an on/off setting is written with (any case; TOML true/false read the same).
ON_WORDS: Final = ("1", "true", "yes", "on")
OFF_WORDS: Final = ("0", "false", "no", "off")


def _word(raw: Any) -> str:
    return str(raw).strip().lower()


def switch_setting(var: str, raw: Any, default: bool) -> bool:
    """An on/off setting: ``default`` when unset (or empty), on or off by its word, and
    refused when it is neither (a typo must not silently mean either)."""
    if raw is None or _word(raw) == "":
        return default
    if _word(raw) in ON_WORDS:
        return True
    if _word(raw) in OFF_WORDS:
        return False
    raise refuse(f"{var}={quoted(raw)}; use 1 (on) or 0 (off), or unset it.")


def optional_switch(var: str, raw: Any) -> bool | None:
    """An on/off setting that is None when unset (or empty): its default is decided
    later, by what uses it."""
    return None if raw is None or _word(raw) == "" else switch_setting(var, raw, False)


def presence_setting(var: str, raw: Any, what: str) -> bool:
    """A setting whose presence turns ``what`` on (the capability profile's rule: set,
    even empty, is on). A value that reads as off would turn it on all the same, so it
    refuses the start and says to unset the variable instead."""
    if raw is None:
        return False
    if _word(raw) in OFF_WORDS:
        raise refuse(
            f"{var}={quoted(raw)}: the variable's presence turns {what} on whatever its "
            f"value, so doiget does not start with it. Unset {var} to leave {what} off, "
            "or set it to 1 to turn it on."
        )
    return True
