"""YouTube transcripts, fetched by youtube-transcript-api over doiget's own network.

The library speaks ``requests``; :class:`_NetSession` hands each of its requests to a
:class:`~doiget.net.client.SourceClient` bound to YouTube's hosts, so the SSRF guard,
allowlist, caps, rate gate and host map apply exactly as to every other request.
The library runs in a worker thread and calls back into the event loop per request.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.from_thread

from doiget.errors import DoigetError
from doiget.net.client import SourceClient
from doiget.web.failure import Kind, web_error

if TYPE_CHECKING:
    import requests

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


def _session(client: SourceClient) -> requests.Session:
    import requests
    from requests.structures import CaseInsensitiveDict

    class _NetSession(requests.Session):
        def request(  # type: ignore[override]
            self, method: str, url: str, **kwargs: Any
        ) -> requests.Response:
            merged = {**self.headers, **(kwargs.get("headers") or {})}
            # doiget's own User-Agent and connection handling apply, not requests'.
            headers = {
                name: str(value)
                for name, value in merged.items()
                if name.lower() not in ("user-agent", "connection", "accept-encoding")
            }
            cookies = "; ".join(f"{cookie.name}={cookie.value}" for cookie in self.cookies)
            if cookies:
                headers["Cookie"] = cookies
            if method.upper() == "POST":
                body = json.dumps(kwargs.get("json")).encode() if "json" in kwargs else b""
                headers["Content-Type"] = "application/json"
                fetched = anyio.from_thread.run(
                    lambda: client.post(url, body, headers=headers, accept_status=(400, 403, 429))
                )
            else:
                fetched = anyio.from_thread.run(
                    lambda: client.get(url, headers=headers, accept_status=(400, 403, 429))
                )
            response = requests.Response()
            response.status_code = fetched.status
            response._content = fetched.content
            response.headers = CaseInsensitiveDict(dict(fetched.headers.items()))
            response.url = fetched.url
            response.encoding = "utf-8"
            return response

    return _NetSession()


def _stamp(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


async def read_transcript(client: SourceClient, video: str, title_hint: str) -> Transcript:
    """The video's transcript (English preferred, else the first listed)."""

    def fetch() -> Any:
        from youtube_transcript_api import YouTubeTranscriptApi

        api = YouTubeTranscriptApi(http_client=_session(client))
        listing = api.list(video)
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
