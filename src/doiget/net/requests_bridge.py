"""``requests`` sessions that send every request through a :class:`SourceClient`.

Some libraries speak only ``requests`` (youtube-transcript-api). They get a session
whose every request is handed to a source client, so the SSRF guard, allowlist,
caps, rate gate and host map apply exactly as to every other request, and the
library never opens a connection of its own. Such a library runs in a worker thread
(``anyio.to_thread``); the session calls back into the event loop per request.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

import anyio.from_thread

from doiget.net.client import SourceClient

if TYPE_CHECKING:
    import requests
    from youtube_transcript_api import YouTubeTranscriptApi

# Statuses handed back to the library as answers (it reads their bodies) instead of
# being raised as doiget errors.
_ANSWERED_STATUS: Final = (400, 403, 429)


def guarded_session(client: SourceClient) -> requests.Session:
    """A session whose GET and POST requests go through ``client``."""
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
                    lambda: client.post(url, body, headers=headers, accept_status=_ANSWERED_STATUS)
                )
            else:
                fetched = anyio.from_thread.run(
                    lambda: client.get(url, headers=headers, accept_status=_ANSWERED_STATUS)
                )
            response = requests.Response()
            response.status_code = fetched.status
            response._content = fetched.content
            response.headers = CaseInsensitiveDict(dict(fetched.headers.items()))
            response.url = fetched.url
            response.encoding = "utf-8"
            return response

    return _NetSession()


def youtube_transcripts(client: SourceClient) -> YouTubeTranscriptApi:
    """youtube-transcript-api bound to a :func:`guarded_session` of ``client`` (call
    from a worker thread)."""
    from youtube_transcript_api import YouTubeTranscriptApi

    return YouTubeTranscriptApi(http_client=guarded_session(client))
