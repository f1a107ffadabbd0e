"""YouTube transcripts, fetched by youtube-transcript-api over doiget's own network.

The library speaks ``requests``; :func:`doiget.net.requests_bridge.youtube_transcripts`
hands each of its requests to a :class:`~doiget.net.client.SourceClient` bound to
YouTube's hosts, so the SSRF guard, allowlist, caps, rate gate and host map apply
exactly as to every other request. The library runs in a worker thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

import anyio

from doiget.errors import DoigetError
from doiget.net.client import SourceClient
from doiget.net.requests_bridge import youtube_transcripts
from doiget.web.failure import Kind, web_error

YOUTUBE_HOSTS: Final = ("youtube.com", "www.youtube.com", "m.youtube.com", "youtu.be")
_VIDEO_ID = re.compile(r"[A-Za-z0-9_-]{11}")


@dataclass(frozen=True, slots=True)
class Transcript:
    """A video's transcript as ``[M:SS] text`` lines."""

    video_id: str
    language: str
    markdown: str


def video_id(url: str) -> str | None:
    """The video id of a YouTube watch, short or youtu.be URL, else None."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host not in YOUTUBE_HOSTS:
        return None
    if host == "youtu.be":
        candidate = parts.path.strip("/")
    elif parts.path == "/watch":
        candidate = (parse_qs(parts.query).get("v") or [""])[0]
    elif parts.path.startswith(("/shorts/", "/embed/", "/live/")):
        candidate = parts.path.split("/")[2]
    else:
        return None
    return candidate if _VIDEO_ID.fullmatch(candidate) else None


def _stamp(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


async def read_transcript(client: SourceClient, video: str, title_hint: str) -> Transcript:
    """The video's transcript (English preferred, else the first listed)."""

    def fetch() -> Any:
        listing = youtube_transcripts(client).list(video)
        try:
            chosen = listing.find_transcript(["en", "en-US", "en-GB"])
        except Exception:
            chosen = next(iter(listing))
        return chosen.fetch()

    try:
        fetched = await anyio.to_thread.run_sync(fetch)
    except DoigetError:
        raise
    except Exception as exc:
        raise web_error(
            Kind.CONTENT,
            f"no transcript could be read for YouTube video {video} ({type(exc).__name__}); "
            "the video may have captions turned off.",
        ) from exc
    lines = [f"# {title_hint}", ""]
    lines += [f"[{_stamp(snippet.start)}] {snippet.text}" for snippet in fetched.snippets]
    return Transcript(video, str(fetched.language_code), "\n".join(lines) + "\n")
