"""Hacker News items read through the official HN API instead of the HTML page."""

from __future__ import annotations

import datetime as dt
import html
import re
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

import anyio

from doiget.errors import DoigetError
from doiget.net.client import SourceClient
from doiget.web.failure import Kind, web_error

API: Final = "https://hacker-news.firebaseio.com/v0/item/{id}.json"
TOP_COMMENTS: Final = 10
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True, slots=True)
class HnItem:
    """A story (or comment) rendered as markdown, with its citation facts."""

    markdown: str
    title: str
    author: str
    date: str | None


def item_id(url: str) -> int | None:
    """The item id of a ``news.ycombinator.com/item?id=N`` URL, else None."""
    parts = urlsplit(url)
    if (parts.hostname or "").lower() != "news.ycombinator.com" or parts.path != "/item":
        return None
    ids = parse_qs(parts.query).get("id", [])
    return int(ids[0]) if ids and ids[0].isascii() and ids[0].isdigit() else None


def _text(raw: Any) -> str:
    """HN's HTML-ish text as plain paragraphs."""
    value = str(raw or "").replace("<p>", "\n\n")
    return html.unescape(_TAG.sub("", value)).strip()


def _date(item: dict[str, Any]) -> str | None:
    stamp = item.get("time")
    if not isinstance(stamp, int):
        return None
    return dt.datetime.fromtimestamp(stamp, dt.UTC).date().isoformat()


async def read_item(client: SourceClient, number: int) -> HnItem:
    """The item and its first top-level comments as markdown."""
    item = await client.get_json(API.format(id=number))
    if not isinstance(item, dict) or item.get("deleted") or item.get("dead"):
        raise web_error(Kind.NOT_FOUND, f"Hacker News item {number} does not exist or was removed.")
    raw_kids = item.get("kids")
    kids = [kid for kid in raw_kids if isinstance(kid, int)] if isinstance(raw_kids, list) else []
    kids = kids[:TOP_COMMENTS]
    comments: list[dict[str, Any] | None] = [None] * len(kids)

    async def comment(slot: int, kid: int) -> None:
        try:
            found = await client.get_json(API.format(id=kid))
        except DoigetError:
            return  # one unreadable comment does not spoil the item
        if isinstance(found, dict) and not found.get("deleted") and not found.get("dead"):
            comments[slot] = found

    async with anyio.create_task_group() as tasks:
        for slot, kid in enumerate(kids):
            tasks.start_soon(comment, slot, kid)

    title = _text(item.get("title")) or f"Hacker News item {number}"
    author = str(item.get("by") or "")
    lines = [f"# {title}", ""]
    facts = [f"by {author}" if author else ""]
    if "score" in item:
        facts.append(f"{item['score']} points")
    if item.get("url"):
        facts.append(f"link: {item['url']}")
    lines += [" · ".join(fact for fact in facts if fact), ""]
    if item.get("text"):
        lines += [_text(item["text"]), ""]
    shown = [found for found in comments if found is not None]
    if shown:
        lines += [f"## Comments (first {len(shown)} of {item.get('descendants', len(shown))})", ""]
        for found in shown:
            lines += [f"**{found.get('by', 'unknown')}**: {_text(found.get('text'))}", ""]
    return HnItem("\n".join(lines).strip() + "\n", title, author, _date(item))
