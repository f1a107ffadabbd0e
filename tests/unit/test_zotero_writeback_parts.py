"""The parts of writing into Zotero that need no library: CSL-JSON as a Zotero item of
the right type, a note's text as escaped HTML, telling the same work apart, and the
write modes."""

from __future__ import annotations

from typing import Any

import pytest

from doiget.errors import DoigetError, ErrorCode
from doiget.zotero.approval import approve
from doiget.zotero.contracts import zotero_key
from doiget.zotero.cslmap import to_zotero_item
from doiget.zotero.matching import Identity
from doiget.zotero.notehtml import note_html

ARTICLE = {
    "type": "article-journal",
    "title": "Über die Quantenmechanik",
    "author": [{"family": "Schrödinger", "given": "Erwin"}, {"literal": "東京大学"}],
    "editor": [{"family": "Planck", "given": "Max"}],
    "container-title": "Annalen der Physik",
    "volume": "384",
    "issue": "4",
    "page": "361-376",
    "DOI": "10.1002/andp.19263840404",
    "issued": {"date-parts": [[1926, 3]]},
    "abstract": "Waves.",
    "publisher": "Wiley",
}


def test_a_journal_article_keeps_every_field_its_type_has() -> None:
    item = to_zotero_item(ARTICLE)
    assert item["itemType"] == "journalArticle"
    assert item["publicationTitle"] == "Annalen der Physik"
    assert (item["volume"], item["issue"], item["pages"]) == ("384", "4", "361-376")
    assert item["DOI"] == "10.1002/andp.19263840404"
    assert item["date"] == "1926-03"
    assert item["abstractNote"] == "Waves."
    assert item["creators"] == [
        {"creatorType": "author", "lastName": "Schrödinger", "firstName": "Erwin"},
        {"creatorType": "author", "name": "東京大学"},
        {"creatorType": "editor", "lastName": "Planck", "firstName": "Max"},
    ]
    # A journal article has no publisher field: Zotero would refuse the item.
    assert "publisher" not in item


@pytest.mark.parametrize(
    ("csl_type", "zotero_type", "container_field"),
    [
        ("paper-conference", "conferencePaper", "proceedingsTitle"),
        ("chapter", "bookSection", "bookTitle"),
        ("webpage", "webpage", "websiteTitle"),
        ("article-newspaper", "newspaperArticle", "publicationTitle"),
    ],
)
def test_the_container_goes_where_each_type_keeps_it(
    csl_type: str, zotero_type: str, container_field: str
) -> None:
    item = to_zotero_item({**ARTICLE, "type": csl_type})
    assert item["itemType"] == zotero_type
    assert item[container_field] == "Annalen der Physik"
    assert [f for f in ("publicationTitle", "proceedingsTitle", "bookTitle", "websiteTitle")
            if f in item] == [container_field]  # fmt: skip


def test_a_doi_the_type_has_no_field_for_goes_into_extra() -> None:
    item = to_zotero_item({**ARTICLE, "type": "report"})
    assert "DOI" not in item
    assert item["extra"] == "DOI: 10.1002/andp.19263840404"
    assert item["institution"] == "Wiley"
    assert "issue" not in item and "volume" not in item


def test_an_arxiv_preprint_carries_its_id_as_zotero_writes_it() -> None:
    csl = {"type": "article", "title": "Attention Is All You Need",
           "author": [{"family": "Vaswani", "given": "Ashish"}],
           "issued": {"date-parts": [[2017, 6, 12]]}}  # fmt: skip
    item = to_zotero_item(csl, arxiv_id="1706.03762")
    assert item["itemType"] == "preprint"
    assert item["archiveID"] == "arXiv:1706.03762"
    assert item["repository"] == "arXiv"
    assert item["extra"] == "arXiv: 1706.03762"
    assert item["date"] == "2017-06-12"


def test_an_unknown_type_is_a_document_and_editors_of_a_thesis_are_contributors() -> None:
    assert to_zotero_item({"type": "song", "title": "x"})["itemType"] == "document"
    thesis = to_zotero_item({**ARTICLE, "type": "thesis"})
    assert [c["creatorType"] for c in thesis["creators"]] == ["author", "author", "contributor"]
    assert thesis["university"] == "Wiley"


def test_a_note_is_escaped_text_never_markup() -> None:
    text = "Reading <b>notes</b> & <script>alert(1)</script>\nsecond line\n\nnext paragraph"
    html = note_html(text)
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;" in html and "&amp;" in html
    assert "<p>Reading &lt;b&gt;notes&lt;/b&gt; &amp; &lt;script&gt;alert(1)&lt;/script&gt;<br/>" \
        "second line</p><p>next paragraph</p>" in html  # fmt: skip


def test_quoted_lines_become_a_blockquote_with_their_page() -> None:
    text = "Why it matters:\n> The wave equation holds\n> for every state. (p. 362)\nMy view."
    html = note_html(text, "Über die Quantenmechanik (10.1002/x)")
    assert (
        "<p>Why it matters:</p><blockquote><p>The wave equation holds<br/>for every state. "
        "(p. 362)</p></blockquote><p>My view.</p><p>Über die Quantenmechanik (10.1002/x)</p>"
    ) in html
    assert note_html("> <img src=x onerror=y>").count("<img") == 0


@pytest.mark.parametrize(
    ("data", "other", "same"),
    [
        ({"DOI": "10.1/ABC"}, {"extra": "DOI: 10.1/abc", "title": "Else"}, True),
        ({"DOI": "10.1/abc"}, {"DOI": "10.1/abd", "title": "T"}, False),
        # A DOI as researchers paste it: a link, a doi: prefix, spaces around.
        ({"DOI": "10.1038/nphys1170"}, {"DOI": "https://doi.org/10.1038/NPHYS1170"}, True),
        ({"DOI": "10.1038/nphys1170"}, {"DOI": " doi:10.1038/nphys1170 "}, True),
        ({"DOI": "http://dx.doi.org/10.1038/nphys1170"}, {"extra": "DOI: 10.1038/nphys1170"}, True),
        ({"DOI": "https://doi.org/10.1038/nphys1170"}, {"DOI": "10.1038/nphys1171"}, False),
        ({"archiveID": "arXiv:1706.03762"}, {"url": "https://arxiv.org/abs/1706.03762v5"}, True),
        ({"extra": "arXiv: 1706.03762v2"}, {"archiveID": "arXiv:1706.03762"}, True),
        ({"title": "Über die Ströme!"}, {"title": "uber die stroeme"}, False),
        ({"title": "Über die  Ströme!"}, {"title": "über die ströme"}, True),
        ({"title": ""}, {"title": ""}, False),
    ],
)
def test_the_same_work_is_told_by_identifier_then_title(
    data: dict[str, Any], other: dict[str, Any], same: bool
) -> None:
    assert Identity.of_item({"title": "T", **data}).same(Identity.of_item(other)) is same


async def _never(message: str, details: Any) -> bool | None:
    raise AssertionError("asked although the mode decides")


@pytest.mark.parametrize(("answer", "said"), [(False, "did not approve"), (None, "cannot ask")])
async def test_ask_refuses_unless_the_user_says_yes(answer: bool | None, said: str) -> None:
    async def confirm(message: str, details: Any) -> bool | None:
        return answer

    with pytest.raises(DoigetError) as caught:
        await approve("ask", confirm, "Add x", {})
    assert caught.value.code is ErrorCode.CAPABILITY_DENIED
    assert said in caught.value.message


async def test_on_writes_without_asking_and_off_says_how_to_enable() -> None:
    await approve("on", _never, "Add x", {})
    with pytest.raises(DoigetError) as caught:
        await approve("off", _never, "Add x", {})
    assert "DOIGET_ZOTERO_WRITE=ask" in caught.value.message


@pytest.mark.parametrize("key", ["ABCD2345", "23456789"])
def test_item_keys_of_zoteros_alphabet_pass(key: str) -> None:
    assert zotero_key(key) == key


@pytest.mark.parametrize("key", ["abcd2345", "ABCD234", "../keys/", "ABCD0345", "ABCD2345X"])
def test_anything_else_is_no_item_key(key: str) -> None:
    with pytest.raises(ValueError):
        zotero_key(key)
