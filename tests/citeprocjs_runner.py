"""citeproc-js, the CSL reference implementation, run by node on the same CSL-JSON
items, style file and locale file as doiget's formatter.

The npm package ``citeproc`` is installed once into a folder: $DOIGET_CITEPROC_JS when
set (.ci/run installs it there before the tests), else a temporary folder. Where npm
cannot reach its registry the caller skips, except in CI (CI=true), where it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Final

from doiget.cite.styles import Style, locale_path

PACKAGE: Final = "citeproc@2.4.63"
RENDER_JS: Final = Path(__file__).with_name("citeprocjs") / "render.js"


class Unavailable(Exception):
    """node or the citeproc package cannot be had here."""


def install(folder: Path) -> Path:
    """The citeproc-js module file, installed into ``folder`` unless already there."""
    module = folder / "node_modules" / "citeproc" / "citeproc_commonjs.js"
    if module.is_file():
        return module
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
    if done.returncode or not module.is_file():
        raise Unavailable(f"npm install {PACKAGE} failed: {done.stderr.strip()[-300:]}")
    return module


def module_path(scratch: Path) -> Path:
    """Install (or find) citeproc-js: $DOIGET_CITEPROC_JS, else ``scratch``."""
    configured = os.environ.get("DOIGET_CITEPROC_JS")
    return install(Path(configured) if configured else scratch)


def render(module: Path, items: list[dict[str, Any]], style: Style, locale: str) -> dict[str, Any]:
    """{order, entries: {id: text}, citations: {id: text}} from citeproc-js (text)."""
    request = {
        "module": str(module),
        "style": str(style.path),
        "locales": str(locale_path(locale).parent),
        "lang": locale,
        "format": "text",
        "items": items,
    }
    done = subprocess.run(
        ["node", str(RENDER_JS)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result
