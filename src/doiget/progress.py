"""Telling a caller how far long work has come: the CLI's progress bar takes a plain
function, the MCP server's progress notifications an async one; both are called alike."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any


async def report(progress: Callable[..., Awaitable[None] | None] | None, *args: Any) -> None:
    """Call ``progress(*args)`` when there is one, and await what it returns if anything."""
    if progress is None:
        return
    maybe = progress(*args)
    if inspect.isawaitable(maybe):
        await maybe
