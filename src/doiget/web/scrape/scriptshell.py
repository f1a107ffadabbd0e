"""Whether an HTML page is a shell that script fills in: the browser tier's trigger.

A page built in the browser arrives with little or no text and the code that will
write it: an empty mount point of an app framework, a ``<noscript>`` note asking for
JavaScript, or an almost empty body beside a script bundle. Pages with real server-
rendered text are never shells, whatever scripts they also carry.
"""

from __future__ import annotations

import re
from typing import Final

import lxml.html
from lxml import etree

# Below this many characters of visible text a page with a framework mount point or a
# JavaScript <noscript> note is a shell.
SHELL_TEXT_CHARS: Final = 500
# Below this many, any page whose text would come from its scripts is one.
EMPTY_TEXT_CHARS: Final = 200
# An inline script this large is an application, not a tracking snippet.
APP_SCRIPT_BYTES: Final = 2048
_MOUNT_IDS: Final = frozenset(
    {"root", "app", "__next", "___gatsby", "__nuxt", "svelte", "react-root", "app-root", "main-app"}
)
_MOUNT_ATTRIBUTES: Final = ("data-reactroot", "ng-version", "ng-app", "data-v-app")
_MOUNT_TAGS: Final = frozenset({"app-root"})
_INVISIBLE: Final = ("script", "style", "noscript", "template", "head", "svg")
_SCRIPT_TYPES: Final = frozenset({"", "module", "text/javascript", "application/javascript"})
_ASKS_FOR_SCRIPT: Final = re.compile(
    r"\b(enable|turn on|requires?|need|activate|allow)\b.{0,40}\bjava\s?script\b"
    r"|\bjava\s?script\b.{0,40}\b(disabled|required|enabled|turned off)\b",
    re.IGNORECASE | re.DOTALL,
)


def _visible_chars(tree: lxml.html.HtmlElement, enough: int) -> int:
    """Characters of text a reader would see without scripts (white space collapsed),
    counted up to ``enough``."""
    count = 0
    for element in tree.iter():
        if not isinstance(element.tag, str) or element.tag.lower() in _INVISIBLE:
            continue
        if any(
            isinstance(node.tag, str) and node.tag.lower() in _INVISIBLE
            for node in element.iterancestors()
        ):
            continue
        for text in (element.text, *(node.tail for node in element if isinstance(node.tag, str))):
            count += len(" ".join((text or "").split()))
        if count >= enough:
            break
    return count


def _scripts(tree: lxml.html.HtmlElement) -> tuple[bool, int]:
    """(whether the page loads an external script, bytes of inline script)."""
    external, inline = False, 0
    for script in tree.iter("script"):
        if (script.get("type") or "").split(";")[0].strip().lower() not in _SCRIPT_TYPES:
            continue
        if script.get("src"):
            external = True
        else:
            inline += len((script.text or "").encode())
    return external, inline


def _mount_point(tree: lxml.html.HtmlElement) -> str | None:
    for element in tree.iter():
        if not isinstance(element.tag, str):
            continue
        if element.tag.lower() in _MOUNT_TAGS:
            return f"<{element.tag.lower()}>"
        identifier = (element.get("id") or "").lower()
        if identifier in _MOUNT_IDS:
            return f"#{identifier}"
        for attribute in _MOUNT_ATTRIBUTES:
            if element.get(attribute) is not None:
                return f"[{attribute}]"
    return None


def script_shell(html: str) -> str | None:
    """Why ``html`` looks like a page that script fills in, or None when it does not."""
    try:
        tree = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return None
    external, inline = _scripts(tree)
    if not external and inline == 0:
        return None
    text = _visible_chars(tree, SHELL_TEXT_CHARS)
    if text >= SHELL_TEXT_CHARS:
        return None
    noscript = " ".join(
        etree.tostring(node, method="text", encoding="unicode") for node in tree.iter("noscript")
    )
    if _ASKS_FOR_SCRIPT.search(noscript):
        return "its <noscript> note asks for JavaScript"
    mount = _mount_point(tree)
    if mount is not None:
        return f"its text goes into an app mount point ({mount})"
    if text < EMPTY_TEXT_CHARS and (external or inline >= APP_SCRIPT_BYTES):
        return "its body is almost empty beside a script bundle"
    return None
