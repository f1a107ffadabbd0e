"""The tool reference's examples of the zotero toolset give, against the fake Zotero
desktop app and the replay upstream, the results the reference shows."""

from __future__ import annotations

from pathlib import Path

from docsexamples import check_group
from importutil import route_library

from zoterofake import ZoteroWorld

from replay import ReplayUpstream


async def test_zotero_examples_give_their_documented_results(
    upstream: ReplayUpstream,
    doiget_env: dict[str, str],
    zotero_local: ZoteroWorld,
    tmp_path: Path,
) -> None:
    route_library(upstream)
    # The researcher keeps a collection of works to cite, and has not got the one added.
    zotero_local.fake.add_collection("To cite")
    zotero_local.fake.delete(zotero_local.seeded.preprint)
    env = {**doiget_env, **zotero_local.env, "DOIGET_ZOTERO_WRITE": "on"}
    await check_group("zotero", env, tmp_path)
