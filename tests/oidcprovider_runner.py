"""oidc-provider, the certified OpenID Connect server for node, run on loopback TLS.

The npm package is installed once into a folder: $DOIGET_OIDC_PROVIDER when set
(.ci/run installs it there before the tests), else a temporary folder. Where npm
cannot reach its registry the caller skips, except in CI (CI=true), where it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

PACKAGE: Final = "oidc-provider@9.13.3"
SCRIPT: Final = Path(__file__).with_name("oidcprovider") / "provider.mjs"


class Unavailable(Exception):
    """node or the oidc-provider package cannot be had here."""


def install(folder: Path) -> Path:
    """The folder holding node_modules/oidc-provider, installed unless already there."""
    if (folder / "node_modules" / "oidc-provider" / "lib" / "index.js").is_file():
        return folder
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        raise Unavailable("node and npm are not installed (Debian: apt-get install npm)")
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--prefix", str(folder), "--no-save", "--no-audit", "--no-fund", PACKAGE],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode or not (folder / "node_modules" / "oidc-provider").is_dir():
        raise Unavailable(f"npm install {PACKAGE} failed: {done.stderr.strip()[-300:]}")
    return folder


def modules_folder(scratch: Path) -> Path:
    """Install (or find) oidc-provider: $DOIGET_OIDC_PROVIDER, else ``scratch``."""
    configured = os.environ.get("DOIGET_OIDC_PROVIDER")
    return install(Path(configured) if configured else scratch)


@contextmanager
def running(settings: dict[str, Any], folder: Path) -> Iterator[str]:
    """The provider started with ``settings`` (see provider.mjs); yields its issuer."""
    config = folder / "provider.json"
    config.write_text(json.dumps(settings))
    process = subprocess.Popen(
        ["node", str(SCRIPT), str(config)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=(folder / "provider.stderr").open("w"),
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line:
            raise AssertionError(
                f"oidc-provider did not start: {(folder / 'provider.stderr').read_text()}"
            )
        yield str(json.loads(line)["issuer"])
    finally:
        process.terminate()
        process.wait(timeout=10)
