"""Run ``doiget`` with the event loop watched: every span over a threshold during
which one callback held the loop is recorded with the stack it was in, and a
summary is written to a file at exit.

    python benchmarks/loop_profile.py OUT.txt [--threshold-ms 10] serve --http --port 8765

A watchdog thread samples the loop thread's stack while a callback has run longer
than the threshold (what asyncio's debug mode reports as a slow callback, but with
where the time went rather than which task it was). Benchmark tooling only.
"""

from __future__ import annotations

import asyncio.events
import atexit
import collections
import gc
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

INTERVAL = 0.002


class Watch:
    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.started = 0.0  # when the running callback began; 0 when none runs
        self.thread_id = threading.get_ident()
        self.spans: list[float] = []
        self.places: collections.Counter[str] = collections.Counter()
        self._sampled = False
        self.collections: list[tuple[int, float]] = []  # (generation, seconds) over threshold
        self._collecting = 0.0

    def on_collection(self, phase: str, info: dict[str, Any]) -> None:
        """gc's callback: collections longer than the threshold, by generation."""
        if phase == "start":
            self._collecting = time.perf_counter()
        elif self._collecting:
            took = time.perf_counter() - self._collecting
            if took > self.threshold:
                self.collections.append((int(info["generation"]), took))

    def patch(self) -> None:
        run = asyncio.events.Handle._run
        watch = self

        def timed(handle: Any) -> None:
            watch.thread_id = threading.get_ident()
            watch._sampled = False
            watch.started = began = time.perf_counter()
            try:
                run(handle)
            finally:
                watch.started = 0.0
                took = time.perf_counter() - began
                if took > watch.threshold:
                    watch.spans.append(took)

        asyncio.events.Handle._run = timed  # type: ignore[method-assign]

    def sample(self) -> None:
        while True:
            time.sleep(INTERVAL)
            started = self.started
            if not started or self._sampled:
                continue
            if time.perf_counter() - started < self.threshold:
                continue
            frame = sys._current_frames().get(self.thread_id)
            if frame is None:
                continue
            self._sampled = True
            stack = traceback.extract_stack(frame)
            ours = [f for f in stack if "/doiget/" in f.filename or "/mcp/" in f.filename]
            where = ours[-3:] or stack[-3:]
            self.places[
                " <- ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(where))
            ] += 1

    def write(self, out: Path) -> None:
        spans = sorted(self.spans)
        lines = [
            f"spans over {self.threshold * 1000:.0f} ms: {len(spans)}; "
            f"longest {spans[-1] * 1000:.0f} ms"
            if spans
            else "spans over threshold: 0",
            *(f"{count:6d}  {place}" for place, count in self.places.most_common(25)),
            f"objects the garbage collector tracks at exit: {len(gc.get_objects()):,}; "
            f"garbage collections over {self.threshold * 1000:.0f} ms: {len(self.collections)}"
            + (
                f"; longest {max(t for _, t in self.collections) * 1000:.0f} ms (generations "
                + ", ".join(sorted({str(g) for g, _ in self.collections}))
                + ")"
                if self.collections
                else ""
            ),
        ]
        out.write_text("\n".join(lines) + "\n")


def main() -> None:
    out = Path(sys.argv[1])
    args = sys.argv[2:]
    threshold = 0.010
    if args[:1] == ["--threshold-ms"]:
        threshold, args = float(args[1]) / 1000, args[2:]
    watch = Watch(threshold)
    watch.patch()
    gc.callbacks.append(watch.on_collection)
    threading.Thread(target=watch.sample, daemon=True).start()
    atexit.register(watch.write, out)
    sys.argv = ["doiget", *args]
    from doiget.entry import main as doiget_main

    doiget_main()


if __name__ == "__main__":
    main()
