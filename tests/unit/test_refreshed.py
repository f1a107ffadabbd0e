"""A slow reading (health's scan of every stored file) answered from its latest
result: asked in a tight loop, it still runs a bounded share of the time."""

from __future__ import annotations

import time

import anyio

from doiget.server.refreshed import Refreshed

PATIENCE = 30.0  # upper bound on any wait, never a measurement


class Reading:
    """A reading that takes ``seconds`` and counts itself."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.count = 0
        self.busy = 0.0

    async def __call__(self) -> int:
        began = time.monotonic()
        await anyio.sleep(self.seconds)
        self.count += 1
        self.busy += time.monotonic() - began
        return self.count


async def test_asked_without_pause_a_reading_rests_ten_times_its_length() -> None:
    reading = Reading(0.02)
    refreshed = Refreshed(reading)
    assert await refreshed.get() == 1  # the first ask waits for a reading
    began = time.monotonic()
    answers = []
    while time.monotonic() - began < 1.0:
        answers.append(await refreshed.get())
        await anyio.sleep(0)
    elapsed = time.monotonic() - began
    # Each reading rests ten times as long as it took: busy at most a share 1/11 of
    # the time, plus the reading under way (a bound that holds at any speed).
    assert reading.busy <= elapsed / 11 + 2 * reading.busy / reading.count
    assert answers == sorted(answers)  # answers never go back
    with anyio.fail_after(PATIENCE):  # and later readings do arrive
        while await refreshed.get() < 2:
            await anyio.sleep(0.01)
    await refreshed.aclose()


async def test_a_change_shows_once_the_rest_after_the_reading_has_passed() -> None:
    value = ["before"]

    async def read() -> str:
        return value[0]

    refreshed = Refreshed(read, rest=0.0)
    assert await refreshed.get() == "before"
    value[0] = "after"
    with anyio.fail_after(PATIENCE):
        while await refreshed.get() != "after":
            await anyio.sleep(0.001)
    await refreshed.aclose()


async def test_a_failed_first_reading_is_raised_to_the_asker() -> None:
    async def broken() -> int:
        raise OSError("store unreadable")

    refreshed = Refreshed(broken)
    try:
        await refreshed.get()
    except OSError as error:
        assert "unreadable" in str(error)
    else:
        raise AssertionError("the failure was not raised")
    await refreshed.aclose()
