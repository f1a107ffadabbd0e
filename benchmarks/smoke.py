"""``--smoke``, which every benchmark takes: a run at a tiny size, in seconds, that
shows the script still works against the code (CI runs each one so); its numbers
measure nothing."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

# Tiny stand-ins for data the benchmarks read from elsewhere (licences that forbid
# copying, or sizes too big for the repository).
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"

HELP = "a tiny run (seconds) that checks the script works; its numbers measure nothing"


def parse_args(
    parser: argparse.ArgumentParser, needed: tuple[str, ...] = (), **tiny: Any
) -> argparse.Namespace:
    """``parser``'s arguments with ``--smoke`` added; under it, ``tiny``'s values
    replace the arguments of the same names. The options named in ``needed`` must be
    given unless ``--smoke`` is (which gives them itself)."""
    parser.add_argument("--smoke", action="store_true", help=HELP)
    args = parser.parse_args()
    if args.smoke:
        for name, value in tiny.items():
            setattr(args, name, value)
    missing = [f"--{name}" for name in needed if getattr(args, name) is None]
    if missing:
        parser.error(f"{' and '.join(missing)} needed (or --smoke)")
    return args
