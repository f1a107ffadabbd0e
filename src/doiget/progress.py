"""Telling a caller how far long work has come: the CLI's progress bar takes a plain
function, the MCP server's progress notifications an async one; both are called alike."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anyio

T = TypeVar("T")
R = TypeVar("R")


async def report(progress: Callable[..., Awaitable[None] | None] | None, *args: Any) -> None:
    """Call ``progress(*args)`` when there is one, and await what it returns if anything."""
    if progress is None:
        return
    maybe = progress(*args)
    if inspect.isawaitable(maybe):
        await maybe


async def in_order(
    items: Sequence[T],
    work: Callable[[T], Awaitable[R]],
    *,
    at_once: int,
    progress: Callable[..., Awaitable[None] | None] | None = None,
) -> list[R]:
    """``work(item)`` for every item, ``at_once`` at a time, the answers in input order;
    ``progress(done, total, answer)`` after each, in the order they finish."""
    answers: list[R | None] = [None] * len(items)
    limit = anyio.Semaphore(at_once)
    done = 0

    async def one(index: int) -> None:
        nonlocal done
        async with limit:
            answer = await work(items[index])
        answers[index] = answer
        done += 1
        await report(progress, done, len(items), answer)

    async with anyio.create_task_group() as group:
        for index in range(len(items)):
            group.start_soon(one, index)
    return [answer for answer in answers if answer is not None]
