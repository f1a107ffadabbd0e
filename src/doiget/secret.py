"""A holder for credentials whose text never shows in reprs, logs or errors."""

from __future__ import annotations

from typing import Final, NoReturn

_REDACTED: Final = "[redacted]"


class Secret:
    """Wraps a credential. ``str``/``repr``/formatting print a placeholder.

    The value is reached only through :meth:`reveal`, at the one place that sends it
    upstream. Pickling is refused so a key cannot leave the process by accident.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The credential itself: call only where it is sent to its upstream."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret({_REDACTED})"

    def __str__(self) -> str:
        return _REDACTED

    def __format__(self, spec: str) -> str:
        return _REDACTED

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    def __reduce__(self) -> NoReturn:
        raise TypeError("a Secret cannot be pickled")


def revealed(secret: Secret | None) -> str | None:
    """The credential of ``secret`` (None when unset): only where it is sent upstream."""
    return secret.reveal() if secret is not None else None
