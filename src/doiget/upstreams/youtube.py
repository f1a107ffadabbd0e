"""YouTube, for video transcripts (client: :mod:`doiget.web.scrape.youtube`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Role, Upstream
from doiget.upstreams.registry import register

UPSTREAM: Final = register(
    Upstream(
        name="youtube",
        label="YouTube transcripts",
        role=Role.SCRAPE,
        hosts=("youtube.com", "www.youtube.com", "m.youtube.com"),
        min_gap_s=0.0,
        toolsets=("web",),
    )
)
