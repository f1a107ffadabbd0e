"""arXiv's export API and PDFs (client: :mod:`doiget.sources.arxiv`)."""

from __future__ import annotations

from typing import Final

from doiget.upstreams.declaration import Role, Upstream
from doiget.upstreams.registry import register

# arXiv's published terms: one request every three seconds, key or not.
UPSTREAM: Final = register(
    Upstream(
        name="arxiv",
        label="arXiv",
        role=Role.SCHOLARLY,
        hosts=("arxiv.org", "export.arxiv.org", "*.arxiv.org"),
        min_gap_s=3.0,
        toolsets=("papers", "scholar", "web"),
    )
)
