"""citeproc-js, the CSL reference implementation, run by node on the same CSL-JSON
items, style file and locale file as doiget's formatter.

The npm package ``citeproc`` is installed once into a folder: $DOIGET_CITEPROC_JS when
set (.ci/run installs it there before the tests), else a temporary folder. Where npm
cannot reach its registry the caller skips, except in CI (CI=true), where it fails.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Final

from doiget.cite.styles import Style, locale_path
from npmpackage import installed

PACKAGE: Final = "citeproc@2.4.63"
MODULE: Final = "node_modules/citeproc/citeproc_commonjs.js"
RENDER_JS: Final = Path(__file__).with_name("citeprocjs") / "render.js"


def module_path(scratch: Path) -> Path:
    """Install (or find) citeproc-js: $DOIGET_CITEPROC_JS, else ``scratch``."""
    return installed(PACKAGE, MODULE, "DOIGET_CITEPROC_JS", scratch)


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
