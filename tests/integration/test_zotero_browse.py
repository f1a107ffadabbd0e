"""Reading the researcher's Zotero for an agent through the fake library: searches by
each filter, one item whole (notes, attachments with their files or why they are
missing, annotations), the collection tree, and errors that name what exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from doiget.contract import plain
from doiget.errors import DoigetError, ErrorCode
from doiget.runtime import load_runtime
from doiget.zotero.contracts import ZoteroSearch
from doiget.zotero.service import ZoteroCore
from zoterofake import ZoteroWorld

from replay import ReplayUpstream


def _search(env: dict[str, str], **fields: Any) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        runtime = load_runtime(env)
        core = ZoteroCore(runtime)
        try:
            found: dict[str, Any] = plain(await core.search(ZoteroSearch.model_validate(fields)))
            return found
        finally:
            await core.aclose()
            await runtime.aclose()

    return anyio.run(run)


@pytest.fixture
def web_env(tmp_path: Path, upstream: ReplayUpstream, zotero_web: ZoteroWorld) -> dict[str, str]:
    return {**upstream.isolated_env(tmp_path), **zotero_web.env}


def _keys(found: dict[str, Any]) -> list[str]:
    return [item["key"] for item in found.get("items", [])]


def test_each_filter_narrows_the_search(web_env: dict[str, str], zotero_web: ZoteroWorld) -> None:
    seeded = zotero_web.seeded
    assert _keys(_search(web_env, tags=["transformers"])) == [seeded.preprint]
    assert _keys(_search(web_env, collection="méthodes")) == [seeded.book]  # any case
    assert _keys(_search(web_env, collection=seeded.reading)) == [seeded.article]  # by key
    assert _keys(_search(web_env, itemType="preprint")) == [seeded.preprint]
    assert _keys(_search(web_env, year=1926)) == [seeded.article]
    found = _search(web_env, q="Schrödinger")
    (item,) = found["items"]
    assert item["title"].startswith("Über die Quantenmechanik")
    assert item["creators"][:2] == ["Schrödinger, Erwin", "Łukasiewicz, Jan"]
    assert item["citation_key"] == "schrodinger1926quant"  # Better BibTeX's line in extra
    assert item["csl"]["DOI"] == "10.1002/andp.19263840404"
    assert "notes" not in item  # children only when the item is shown alone


def test_paging_says_how_many_there_are(web_env: dict[str, str]) -> None:
    first = _search(web_env, itemType="-attachment", limit=1)
    second = _search(web_env, itemType="-attachment", limit=1, start=1)
    assert first["total"] == second["total"] >= 3
    assert len(first["items"]) == len(second["items"]) == 1
    assert _keys(first) != _keys(second)


def test_the_collection_tree_when_nothing_is_asked(
    web_env: dict[str, str], zotero_web: ZoteroWorld
) -> None:
    tree = {c["name"]: c for c in _search(web_env)["collections"]}
    assert tree["Méthodes"]["parent"] == zotero_web.seeded.reading
    assert "parent" not in tree["Reading"]


def test_a_missing_collection_names_those_there_are(web_env: dict[str, str]) -> None:
    with pytest.raises(DoigetError) as caught:
        _search(web_env, collection="Nowhere")
    assert caught.value.code is ErrorCode.NOT_FOUND
    assert "Méthodes" in caught.value.message and "Reading" in caught.value.message


def test_the_desktop_app_gives_each_pdfs_path_or_why_it_has_none(
    tmp_path: Path, upstream: ReplayUpstream, zotero_local: ZoteroWorld
) -> None:
    env = {**upstream.isolated_env(tmp_path), **zotero_local.env}
    seeded = zotero_local.seeded
    (article,) = _search(env, key=seeded.article)["items"]
    (pdf,) = article["attachments"]
    assert Path(pdf["path"]).read_bytes() == seeded.pdf_bytes
    assert len(pdf["annotations"]) == 6
    assert {a["page_label"] for a in pdf["annotations"]} == {"2", "3", "4", "5", "6", "7"}
    (book,) = _search(env, key=seeded.book)["items"]
    (missing,) = book["attachments"]
    assert "path" not in missing and missing["missing"]
    (preprint,) = _search(env, key=seeded.preprint)["items"]
    assert "attachments" not in preprint and "notes" not in preprint
    assert preprint["citation_key"] == "vaswani2017attention"
