"""The tool reference's examples of resolving a DOI and of the scholar toolset give,
against the replay upstream, the results the reference shows."""

from __future__ import annotations

from pathlib import Path

from docsexamples import check_group

from papersutil import route_pnas
from replay import ReplayUpstream
from scholarutil import route_every_scholar_tool


async def test_scholar_examples_give_their_documented_results(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_pnas(upstream)
    route_every_scholar_tool(upstream)
    await check_group("scholar", doiget_env, tmp_path)
