"""Running the real ``doiget`` program as a person (or a script) would."""

from __future__ import annotations

import os
import subprocess
import sys

_OURS = ("DOIGET_", "SEMANTIC_", "PUBMED_")


def clean_env(env: dict[str, str]) -> dict[str, str]:
    """The parent environment without doiget's variables, plus ``env``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(_OURS)}
    return {**base, **env}


def command(*args: str) -> list[str]:
    """The argv that runs doiget with this interpreter."""
    return [sys.executable, "-m", "doiget", *args]


def doiget(
    *args: str, env: dict[str, str], stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run doiget to completion (within ``timeout`` seconds) and capture its output."""
    return subprocess.run(
        command(*args),
        env=clean_env(env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
