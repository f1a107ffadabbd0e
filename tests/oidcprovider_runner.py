"""oidc-provider, the certified OpenID Connect server for node, run on loopback TLS.

The npm package is installed once into a folder: $DOIGET_OIDC_PROVIDER when set
(.ci/run installs it there before the tests), else a temporary folder. Where npm
cannot reach its registry the caller skips, except in CI (CI=true), where it fails.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from npmpackage import installed

PACKAGE: Final = "oidc-provider@9.13.3"
MODULE: Final = "node_modules/oidc-provider/lib/index.js"
SCRIPT: Final = Path(__file__).with_name("oidcprovider") / "provider.mjs"


def modules_folder(scratch: Path) -> Path:
    """Install (or find) oidc-provider: $DOIGET_OIDC_PROVIDER, else ``scratch``; the
    folder holding its node_modules."""
    module = installed(PACKAGE, MODULE, "DOIGET_OIDC_PROVIDER", scratch)
    return module.parents[3]


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
