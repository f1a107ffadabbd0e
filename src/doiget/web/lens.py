"""Lenses: named sets of domains a web search is restricted to.

The built-in lenses ship as JSON files in ``doiget/web/data/lenses``; a user adds or
overrides lenses with files of the same shape in ``DOIGET_LENS_DIR`` (default: the
platform config dir ``doiget/lenses``)::

    {"name": "mylens", "description": "...", "domains": ["example.org", ...], "cx": "..."}

``cx`` (optional) names a Google Programmable Search engine built for the lens: when
Google is configured and no other provider is asked for, the search goes to that
engine instead of carrying the domains as ``site:`` terms.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from doiget.errors import quoted
from doiget.jsontext import parse_json
from doiget.web.failure import Kind, web_error
from doiget.web.requests import DOMAIN_MAX, DOMAIN_PATTERN

logger = logging.getLogger("doiget.web")

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
_DOMAIN = re.compile(DOMAIN_PATTERN)
_CX = re.compile(r"[A-Za-z0-9:_-]{1,100}")


@dataclass(frozen=True, slots=True)
class Lens:
    """A named domain restriction."""

    name: str
    description: str
    domains: tuple[str, ...]
    cx: str | None = None


def _parse(data: Any, where: str) -> Lens:
    if not isinstance(data, dict):
        raise ValueError(f"{where} is not a JSON object")
    name = str(data.get("name", "")).strip().lower()
    domains = data.get("domains")
    if not _NAME.fullmatch(name):
        raise ValueError(f"{where} has no valid name (lower-case letters, digits, - and _)")
    if not isinstance(domains, list) or not domains:
        raise ValueError(f"{where} must list its domains")
    cleaned = tuple(dict.fromkeys(str(domain).strip().lower() for domain in domains))
    bad = [
        domain
        for domain in cleaned
        if not (_DOMAIN.fullmatch(domain) and len(domain) <= DOMAIN_MAX)
    ]
    if bad:
        raise ValueError(f"{where} lists invalid domains: {', '.join(bad[:3])}")
    cx = data.get("cx")
    if cx is not None and (not isinstance(cx, str) or not _CX.fullmatch(cx)):
        raise ValueError(f"{where} has an invalid cx (a Programmable Search engine id)")
    return Lens(name, str(data.get("description", "")), cleaned, cx or None)


@cache
def builtin_lenses() -> dict[str, Lens]:
    """The lenses shipped with doiget."""
    folder = resources.files("doiget.web") / "data" / "lenses"
    lenses = {}
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if entry.name.endswith(".json"):
            lens = _parse(json.loads(entry.read_text("utf-8")), f"built-in lens {entry.name}")
            lenses[lens.name] = lens
    return lenses


def load_lenses(user_dir: Path | None) -> dict[str, Lens]:
    """Built-in lenses, then the user's (a user lens replaces a built-in of its name).

    A broken user file is skipped with a warning on stderr rather than disabling
    every lens.
    """
    lenses = dict(builtin_lenses())
    if user_dir is None or not user_dir.is_dir():
        return lenses
    for path in sorted(user_dir.glob("*.json")):
        try:
            lens = _parse(parse_json(path.read_text("utf-8")), str(path))
        except (OSError, ValueError) as exc:
            logger.warning("lens file skipped: %s", exc)
            continue
        lenses[lens.name] = lens
    return lenses


def find_lens(lenses: dict[str, Lens], name: str) -> Lens:
    """The lens called ``name``, or a validation error listing the available ones."""
    lens = lenses.get(name.strip().lower())
    if lens is None:
        raise web_error(
            Kind.VALIDATION,
            f"unknown lens {quoted(name)}; available lenses: {', '.join(sorted(lenses))}.",
        )
    return lens
