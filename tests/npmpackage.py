"""An npm package a test runs under node, installed once into a folder.

The folder is the one the package's variable names (.ci/run installs there before the
tests), else a scratch folder. Where node, npm or the registry cannot be had,
:class:`Unavailable` says why: the caller skips, except in CI (CI=true), where it fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path


class Unavailable(Exception):
    """node or the npm package cannot be had here."""


def installed(package: str, marker: str, variable: str, scratch: Path) -> Path:
    """The path ``marker`` (relative to the install folder) of ``package`` (``name@x.y.z``),
    installed into $``variable`` or ``scratch`` unless it is there already."""
    configured = os.environ.get(variable)
    folder = Path(configured) if configured else scratch
    found = folder / marker
    if found.exists():
        return found
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        raise Unavailable("node and npm are not installed (Debian: apt-get install npm)")
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--prefix", str(folder), "--no-save", "--no-audit", "--no-fund", package],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode or not found.exists():
        raise Unavailable(f"npm install {package} failed: {done.stderr.strip()[-300:]}")
    return found
