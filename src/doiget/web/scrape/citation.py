"""How to cite a web page: its facts, and APA 7 and MLA 9 references built from them.

The references are plain strings with ``*...*`` marking italics (markdown). Everything
is derived from the arguments alone, so the same page and access date always give the
same citation.

Author strings come in many shapes; :func:`parse_authors` reads the common ones:

* several names separated by ``;`` (each ``Last, First`` or ``First Last``);
* ``First Last`` names separated by ``,``, ``and`` or ``&``;
* one inverted name ``Last, First`` (also ``Last, F. M.``);
* an organisation (``World Health Organization``, ``NASA``, ``The Guardian``), kept whole.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from doiget.namewords import PARTICLES, SUFFIXES

# Words that mark a name as an organisation's rather than a person's.
_ORGANISATION_WORDS: Final = frozenset(
    [
        "academy",
        "agency",
        "association",
        "authority",
        "bank",
        "board",
        "bureau",
        "center",
        "centers",
        "centre",
        "centres",
        "college",
        "commission",
        "committee",
        "company",
        "corporation",
        "council",
        "department",
        "division",
        "editors",
        "editorial",
        "federation",
        "foundation",
        "fund",
        "group",
        "inc",
        "institute",
        "institution",
        "laboratory",
        "league",
        "library",
        "limited",
        "llc",
        "ltd",
        "media",
        "ministry",
        "museum",
        "network",
        "news",
        "office",
        "organisation",
        "organization",
        "partners",
        "press",
        "program",
        "programme",
        "project",
        "reporter",
        "school",
        "service",
        "society",
        "staff",
        "team",
        "times",
        "trust",
        "university",
    ]
)
_SUFFIXES: Final = SUFFIXES | {"jr.", "sr."}
_AND: Final = re.compile(r",?\s+(?:and|&)\s+", re.IGNORECASE)
_BY: Final = re.compile(r"^by\s+", re.IGNORECASE)
_DATE: Final = re.compile(r"^(\d{4})(?:[-/](\d{1,2})(?:[-/](\d{1,2}))?)?")
_APA_MAX_AUTHORS: Final = 20
_MONTHS: Final = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_MLA_MONTHS: Final = [
    "Jan.",
    "Feb.",
    "Mar.",
    "Apr.",
    "May",
    "June",
    "July",
    "Aug.",
    "Sept.",
    "Oct.",
    "Nov.",
    "Dec.",
]


@dataclass(frozen=True, slots=True)
class Name:
    """One author: a person (family, given, suffix) or an organisation (``literal``)."""

    family: str = ""
    given: str = ""
    suffix: str = ""
    literal: str = ""


@dataclass(frozen=True, slots=True)
class PartialDate:
    """A date known to the year, the month or the day."""

    year: int
    month: int | None = None
    day: int | None = None

    @property
    def iso(self) -> str:
        parts = [f"{self.year:04d}"]
        if self.month is not None:
            parts.append(f"{self.month:02d}")
            if self.day is not None:
                parts.append(f"{self.day:02d}")
        return "-".join(parts)


# -- reading ---------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return text.split()


def _is_organisation(text: str) -> bool:
    """Whether ``text`` names an organisation (by its words, an acronym or "The ...")."""
    words = _words(text)
    lowered = {word.strip(".,()").lower() for word in words}
    if lowered & _ORGANISATION_WORDS:
        return True
    if len(words) == 1 and len(text) >= 2 and text.isupper():
        return True
    return bool(words) and words[0].lower() == "the"


def _is_initials(text: str) -> bool:
    """Whether ``text`` is only initials (``J.``, ``J. R.``, ``J.-P.``)."""
    return all(re.fullmatch(r"[A-Z]\.?(?:-[A-Z]\.?)?", word) for word in _words(text))


def _looks_inverted(text: str) -> bool:
    """Whether ``text`` is one ``Last, First`` name rather than two ``First Last`` ones."""
    parts = [part.strip() for part in text.split(",")]
    if len(parts) != 2 or not all(parts):
        return False
    family, given = _words(parts[0]), _words(parts[1])
    return (
        len(family) == 1
        or len(given) == 1
        or _is_initials(parts[1])
        or family[0].lower() in PARTICLES
    )


def _person(text: str) -> Name:
    """One name, ``Last, First`` or ``First Last``; a single word stays whole."""
    text = " ".join(_words(text)).strip(" ,")
    if _is_organisation(text):
        return Name(literal=text)
    if "," in text:
        family, given = (part.strip() for part in text.split(",", 1))
        return Name(family=family, given=given) if family else Name(literal=given)
    words = _words(text)
    suffix = ""
    if len(words) > 2 and words[-1].lower() in _SUFFIXES:
        suffix = words.pop()
    if len(words) < 2:
        return Name(literal=text)
    start = len(words) - 1
    while start > 1 and words[start - 1].lower() in PARTICLES:
        start -= 1
    return Name(family=" ".join(words[start:]), given=" ".join(words[:start]), suffix=suffix)


def parse_authors(author: str | None) -> list[Name]:
    """The authors named in an author string (see the module doc for the shapes read)."""
    text = _BY.sub("", " ".join((author or "").split()))
    if not text:
        return []
    if ";" in text:
        return [_person(part) for part in text.split(";") if part.strip(" ,")]
    if _is_organisation(text):
        return [Name(literal=text)]
    names = []
    for chunk in _AND.split(text):
        if _looks_inverted(chunk):
            names.append(_person(chunk))
        else:
            names.extend(_person(part) for part in chunk.split(",") if part.strip())
    return names


def parse_date(value: str | None) -> PartialDate | None:
    """A ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` date (longer ISO forms cut), or None."""
    match = _DATE.match((value or "").strip())
    if not match:
        return None
    year = int(match.group(1))
    month, day = (int(part) if part else None for part in match.groups()[1:])
    if month is None or not 1 <= month <= 12:
        return PartialDate(year)
    try:
        dt.date(year, month, day or 1)
    except ValueError:
        return PartialDate(year, month)
    return PartialDate(year, month, day)


def _host(url: str) -> str:
    """The URL's host without ``www.``."""
    host = (urlsplit(url).hostname or "").rstrip(".")
    return host.removeprefix("www.")


# -- formatting ------------------------------------------------------------------------


def _period(text: str) -> str:
    """``text`` ended with a period unless it already ends a sentence."""
    return text if text.endswith((".", "?", "!")) else text + "."


def _initials(given: str) -> str:
    """``Daniel Edward`` -> ``D. E.``; ``Jean-Paul`` -> ``J.-P.``."""
    out = []
    for word in _words(given):
        parts = [part for part in word.split("-") if part]
        out.append("-".join(f"{part[0].upper()}." for part in parts))
    return " ".join(item for item in out if item)


def _apa_name(name: Name) -> str:
    if name.literal:
        return name.literal
    initials = _initials(name.given)
    out = f"{name.family}, {initials}" if initials else name.family
    return f"{out}, {name.suffix}" if name.suffix else out


def _apa_authors(names: list[Name]) -> str:
    """APA 7 author list: ``A, B, & C``; over 20, the first 19, an ellipsis, the last."""
    shown = [_apa_name(name) for name in names]
    if len(shown) == 1:
        return shown[0]
    if len(shown) > _APA_MAX_AUTHORS:
        return ", ".join(shown[: _APA_MAX_AUTHORS - 1]) + ", . . . " + shown[-1]
    return ", ".join(shown[:-1]) + ", & " + shown[-1]


def _apa_date(date: PartialDate | None) -> str:
    if date is None:
        return "(n.d.)"
    if date.month is None:
        return f"({date.year})"
    month = _MONTHS[date.month - 1]
    return f"({date.year}, {month} {date.day})" if date.day else f"({date.year}, {month})"


def _mla_name(name: Name, *, first: bool) -> str:
    if name.literal:
        return name.literal
    if first:
        out = f"{name.family}, {name.given}" if name.given else name.family
        return f"{out}, {name.suffix}" if name.suffix else out
    out = f"{name.given} {name.family}".strip()
    return f"{out} {name.suffix}" if name.suffix else out


def _mla_authors(names: list[Name]) -> str:
    """MLA 9 author list: one name, two joined by ``and``, or the first ``et al.``."""
    first = _mla_name(names[0], first=True)
    if len(names) == 1:
        return first
    if len(names) == 2:
        return f"{first}, and {_mla_name(names[1], first=False)}"
    return f"{first}, et al."


def _mla_date(date: dt.date | PartialDate) -> str:
    if date.month is None:
        return str(date.year)
    month = _MLA_MONTHS[date.month - 1]
    return f"{date.day} {month} {date.year}" if date.day else f"{month} {date.year}"


def _site_is_author(names: list[Name], site: str) -> bool:
    """Whether the only author is an organisation of the same name as the site."""
    return (
        len(names) == 1
        and bool(names[0].literal)
        and names[0].literal.casefold() == site.casefold()
    )


def apa(*, url: str, title: str, names: list[Name], site: str, date: PartialDate | None) -> str:
    """An APA 7 reference for a web page.

    ``Author. (Year, Month Day). *Title*. Site. URL``; without an author the title comes
    first; the site is left out when it is the author.
    """
    # The period follows the italics unless the title ends a sentence itself.
    title_part = f"*{title}*" + _period(title)[len(title) :] if title else "[Untitled page]."
    date_part = _period(_apa_date(date))
    author = _apa_authors(names) if names else ""
    parts = [_period(author), date_part, title_part] if author else [title_part, date_part]
    if site and not _site_is_author(names, site):
        parts.append(_period(site))
    parts.append(url)
    return " ".join(parts)


def mla(
    *,
    url: str,
    title: str,
    names: list[Name],
    site: str,
    date: PartialDate | None,
    accessed: dt.date,
) -> str:
    """An MLA 9 reference for a web page.

    ``Author. "Title." *Site*, Day Mon. Year, URL. Accessed Day Mon. Year.``; an
    organisation that is also the site is not repeated as the author.
    """
    if _site_is_author(names, site):
        names = []
    parts = [_period(_mla_authors(names))] if names else []
    parts.append(f'"{_period(title)}"' if title else "[Untitled page].")
    container = [f"*{site}*"] if site else []
    if date is not None:
        container.append(_mla_date(date))
    container.append(url)
    parts.append(_period(", ".join(container)))
    parts.append(f"Accessed {_mla_date(accessed)}.")
    return " ".join(parts)


def build_citation(
    *,
    url: str,
    title: str | None,
    author: str | None,
    site: str | None,
    date: str | None,
    accessed: dt.date,
) -> dict[str, Any]:
    """The citation block of a scraped page.

    ``{"url", "accessedDate", "metadata": {"title", "author", "site", "date"},
    "formatted": {"apa", "mla"}}``: always every key, ``""`` where a fact is unknown;
    the site defaults to the URL's host (without ``www.``), and ``date`` is reported as
    ``YYYY[-MM[-DD]]`` when it can be read.
    """
    title_text = " ".join((title or "").split())
    author_text = " ".join((author or "").split())
    site_text = " ".join((site or "").split()) or _host(url)
    names = parse_authors(author_text)
    published = parse_date(date)
    return {
        "url": url,
        "accessedDate": accessed.isoformat(),
        "metadata": {
            "title": title_text,
            "author": author_text,
            "site": site_text,
            "date": published.iso if published is not None else "",
        },
        "formatted": {
            "apa": apa(url=url, title=title_text, names=names, site=site_text, date=published),
            "mla": mla(
                url=url,
                title=title_text,
                names=names,
                site=site_text,
                date=published,
                accessed=accessed,
            ),
        },
    }
