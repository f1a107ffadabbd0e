"""Two different refs never share a store entry, and an entry never answers for a
ref other than the one its ``[doiget] ref`` names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from doiget.contract import plain
from doiget.errors import DoigetError, ErrorCode
from doiget.models import Work
from doiget.papers import contracts as c
from doiget.papers.store import Store
from doiget.refs import legacy_safekey, parse_ref

from papersutil import JOSE_PDF, MEDIA_PDF, make_papers
from replay import FIXTURES, ReplayUpstream

# Pairs the plain file-name mapping merges into one key.
COLLIDING = [
    ("10.5555/a(b)", "10.5555/a_b"),
    ("10.5555/a_b", "10.5555/a/b"),
    ("10.1038/nature12373(", "10.1038/nature12373"),
    ("10.5555/x[1]", "10.5555/x_1"),
    ("10.5555/p:q", "10.5555/p;q"),
    ("10.5555/end/", "10.5555/end"),
    ("10.5555/a..b", "10.5555/a_b"),
    ("10.5555/a//b", "10.5555/a/b"),
    ("10.5555/é", "10.5555/_"),
    ("10.5555/a<b>", "10.5555/a_b"),
]

# Forms of one ref: they must share the entry.
SAME = [
    ("10.1038/NATURE12373", "https://doi.org/10.1038/nature12373"),
    ("arXiv:2104.12255", "https://arxiv.org/abs/2104.12255"),
]


def _work(ref: str, title: str) -> Work:
    return Work(source="crossref", doi=ref, title=title)


@pytest.mark.parametrize(("first", "second"), COLLIDING)
def test_refs_the_plain_mapping_merges_get_separate_entries(
    tmp_path: Path, first: str, second: str
) -> None:
    a, b = parse_ref(first), parse_ref(second)
    assert legacy_safekey(a) == legacy_safekey(b)  # the mapping alone would merge them
    store = Store(tmp_path)
    for ref, title in ((a, "First"), (b, "Second")):
        with store.locked(ref):
            store.write_metadata(ref, _work(ref.canonical, title), doiget_fields={})
    assert store.metadata_path(a) != store.metadata_path(b)
    assert store.pdf_path(a) != store.pdf_path(b)
    first_entry, second_entry = store.entry(a), store.entry(b)
    assert first_entry is not None and second_entry is not None
    assert first_entry.document["title"] == "First"
    assert second_entry.document["title"] == "Second"


@pytest.mark.parametrize(("one", "other"), SAME)
def test_forms_of_one_ref_share_their_entry(tmp_path: Path, one: str, other: str) -> None:
    store = Store(tmp_path)
    assert store.metadata_path(parse_ref(one)) == store.metadata_path(parse_ref(other))


def test_an_entry_stored_under_the_plain_key_is_still_found(tmp_path: Path) -> None:
    ref = parse_ref("10.1023/A:1007154515475")
    store = Store(tmp_path)
    plain_toml = store.metadata_dir / f"{legacy_safekey(ref)}.toml"
    plain_toml.parent.mkdir(parents=True)
    plain_toml.write_text(
        f'schema_version = "1.0"\ntitle = "Kept"\n[doiget]\nref = "{ref.canonical}"\n'
    )
    entry = store.entry(ref)
    assert entry is not None and entry.document["title"] == "Kept"
    assert store.metadata_path(ref) == plain_toml
    # Another ref that the plain key would also fit does not get that entry.
    assert store.entry(parse_ref("10.1023/a;1007154515475")) is None


def test_a_toml_naming_another_ref_is_never_read_or_replaced(tmp_path: Path) -> None:
    store = Store(tmp_path)
    ref = parse_ref("10.5555/mine")
    path = store.metadata_path(ref)
    path.parent.mkdir(parents=True)
    path.write_text('schema_version = "1.0"\ntitle = "Theirs"\n[doiget]\nref = "10.5555/theirs"\n')
    for action in (
        lambda: store.entry(ref),
        lambda: store.write_metadata(ref, _work(ref.canonical, "Mine"), doiget_fields={}),
        lambda: store.delete(ref),
    ):
        with pytest.raises(DoigetError) as caught:
            action()
        assert caught.value.code is ErrorCode.STORE_ERROR
        assert "10.5555/theirs" in caught.value.message
    assert "Theirs" in path.read_text()


def _route(upstream: ReplayUpstream, doi: str, title: str, pdf_path: str, pdf: str) -> bytes:
    crossref = {
        "status": "ok",
        "message": {"DOI": doi, "title": [title], "type": "journal-article"},
    }
    upstream.json("api.crossref.org", f"/works/{quote(doi, safe='/:;()')}", crossref)
    unpaywall: dict[str, Any] = json.loads(
        (FIXTURES / "unpaywall/v2-10.1038_nature12373.json").read_text()
    )
    location = {**unpaywall["best_oa_location"], "url_for_pdf": f"https://europepmc.org{pdf_path}"}
    unpaywall.update(doi=doi, title=title, best_oa_location=location, oa_locations=[location])
    upstream.json("api.unpaywall.org", f"/v2/{quote(doi, safe='/:;()')}", unpaywall)
    return upstream.fixture("europepmc.org", pdf_path, pdf)


@pytest.mark.parametrize(
    ("first", "second"),
    [("10.5555/a(b)", "10.5555/a_b"), ("10.5555/a_b", "10.5555/a(b)")],
)
async def test_fetching_colliding_refs_keeps_both_papers(
    upstream: ReplayUpstream, doiget_env: dict[str, str], first: str, second: str
) -> None:
    served = {
        first: _route(upstream, first, "Paper One", "/articles/one", JOSE_PDF),
        second: _route(upstream, second, "Paper Two", "/articles/two", MEDIA_PDF),
    }
    papers = make_papers(doiget_env)
    try:
        results = {ref: plain(await papers.fetch(c.PaperFetch(ref=ref))) for ref in served}
        infos = {ref: plain(papers.info(c.PaperLookup(ref=ref))) for ref in served}
    finally:
        await papers.aclose()
    assert results[first]["path"] != results[second]["path"]
    for ref, body in served.items():
        assert Path(results[ref]["path"]).read_bytes() == body
    assert "Paper One" in json.dumps(infos[first])
    assert "Paper Two" in json.dumps(infos[second])
    assert "Paper Two" not in json.dumps(infos[first])
