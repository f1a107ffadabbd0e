"""The Hacker News API that scrape_page reads items from (client: :mod:`doiget.web.scrape.hn`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Role, Upstream
from doiget.upstreams.registry import register

UPSTREAM: Final = register(
    Upstream(
        name="hackernews",
        label="Hacker News API",
        role=Role.SCRAPE,
        hosts=("hacker-news.firebaseio.com",),
        min_gap_s=0.0,
        toolsets=("web",),
    )
)
