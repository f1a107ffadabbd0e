"""Who approves a write into the researcher's Zotero, by ``DOIGET_ZOTERO_WRITE``.

``off`` (the default) refuses every write, saying how to turn writes on; ``ask`` puts
each write to the researcher (the MCP client's elicitation, or the terminal) and writes
only on a yes; ``on`` writes without asking. A face supplies the asking as a
:data:`Confirm`: it answers True (approved), False (declined or dismissed) or None
(it has no way to ask).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from doiget.errors import DoigetError, ErrorCode
from doiget.zoteroconfig import WRITE_VAR, WriteMode

Confirm = Callable[[str, Mapping[str, Any]], Awaitable[bool | None]]

TURN_ON: Final = (
    f"set {WRITE_VAR}=ask (each write approved by the researcher) or {WRITE_VAR}=on "
    "(writes without asking) where doiget is configured, and restart it"
)


async def approve(
    mode: WriteMode, confirm: Confirm, message: str, details: Mapping[str, Any]
) -> None:
    """Return when the write described by ``message`` may go ahead; CAPABILITY_DENIED
    saying why not (and what would allow it) otherwise."""
    if mode == "off":
        raise refused_off()
    if mode == "on":
        return
    answer = await confirm(message, details)
    if answer is None:
        raise DoigetError(
            ErrorCode.CAPABILITY_DENIED,
            f"{WRITE_VAR}=ask, and this client cannot ask the researcher (it declares no "
            "elicitation support): nothing was written. Ask the researcher to run "
            "`doiget zotero add` in a terminal, or to set it to on.",
        )
    if not answer:
        raise DoigetError(
            ErrorCode.CAPABILITY_DENIED,
            "the researcher did not approve this write: nothing was written. Do not retry "
            "it unless they ask for it.",
        )


def refused_off() -> DoigetError:
    """The refusal of a write while writes are off."""
    return DoigetError(
        ErrorCode.CAPABILITY_DENIED, f"writing to Zotero is off: nothing was written; {TURN_ON}."
    )
