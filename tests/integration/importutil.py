"""Bibliographies as citation managers export them, and the recorded upstream answers
that check and store their entries.

The works: Makris et al. 2014 (PNAS, Crossref and Unpaywall records; its only Open
Access copy is on a host off the allowlist), Adak et al. 2001 (closed access), and
Vaswani et al. 2017 (arXiv 1706.03762, whose PDF arXiv serves). The exports are in
``tests/fixtures/bibliographies``; each carries
its manager's quirks: Better BibTeX's biblatex fields and bare file paths, Zotero's
``description:path:mime`` file fields with escaped Windows paths, JabRef's encoding
comment, ``:path:PDF`` files and meta comment, Mendeley's ``:path:pdf`` with the
leading slash left out and ``$\\backslash$``, Paperpile's double quotes, bare numbers
and Drive-relative paths, Zotero RIS ``L1`` links, and CSL-JSON from Zotero (item URLs
as ids) and from Better BibTeX (``citation-key``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from replay import FIXTURES, ReplayUpstream, Reply

PNAS = "10.1073/pnas.1414271111"
CLOSED = "10.1023/a:1007154515475"
ATTENTION = "1706.03762"
PDF = "pdf/openquestion-jose-paper.pdf"
JSON = {"Content-Type": "application/json"}
ATOM = {"Content-Type": "application/atom+xml"}
PNAS_TITLE = (
    "Developing functional musculoskeletal tissues through hypoxia and lysyl "
    "oxidase-induced collagen cross-linking"
)
CLOSED_TITLE = (
    "An essential role of active site arginine residue in iodide binding and histidine "
    "residue in electron transfer for iodide oxidation by horseradish peroxidase"
)
FABRICATED = "Quantum Gravity Priors for Sparse Transformers"
# A title DBLP cannot be asked about: its searches fail (the uncertain entry).
UNREACHABLE = "Neural Sheaf Diffusion for Heterophilic Graph Tides"


def _sample(name: str) -> str:
    return (FIXTURES / "bibliographies" / name).read_text(encoding="utf-8")


BETTER_BIBTEX = _sample("better-bibtex.bib")
ZOTERO_BIBTEX = _sample("zotero.bib")
JABREF = _sample("jabref.bib")
MENDELEY = _sample("mendeley.bib")
PAPERPILE = _sample("paperpile.bib")
ZOTERO_RIS = _sample("zotero.ris")

ZOTERO_CSL = [
    {
        "id": "http://zotero.org/users/local/Jq3Zb8xT/items/7FQ2ZK3M",
        "type": "article-journal",
        "container-title": "Proceedings of the National Academy of Sciences",
        "DOI": PNAS,
        "ISSN": "0027-8424",
        "issue": "45",
        "title": PNAS_TITLE,
        "volume": "111",
        "author": [
            {"family": "Makris", "given": "Eleftherios A."},
            {"family": "Responte", "given": "Donald J."},
            {"family": "Paschos", "given": "Nikolaos K."},
            {"family": "Hu", "given": "Jerry C."},
            {"family": "Athanasiou", "given": "Kyriacos A."},
        ],
        "issued": {"date-parts": [["2014", 11, 11]]},
    }
]

BETTER_CSL = [
    {
        "id": "adak2001",
        "citation-key": "adakEssentialRole2001",
        "type": "article-journal",
        "container-title": "Molecular and Cellular Biochemistry",
        "DOI": "10.1023/A:1007154515475",
        "title": CLOSED_TITLE,
        "author": [
            {"family": "Adak", "given": "Subrata"},
            {"family": "Bandyopadhyay", "given": "Debashis"},
            {"family": "Bandyopadhyay", "given": "Uday"},
            {"family": "Banerjee", "given": "Ranajit K."},
        ],
        "issued": {"date-parts": [[2001]]},
    }
]


def wrong_year() -> str:
    """Better BibTeX's Makris entry cited with the wrong year (a corrected entry)."""
    return (
        BETTER_BIBTEX.replace("makrisDevelopingFunctionalMusculoskeletal2014", "makris2019")
        .replace("2014-11-11", "2019")
        .replace("file = {{FILE}}", "note = {cited from memory}")
    )


def _entry(kind: str, key: str, **fields: str) -> str:
    body = "".join(f"  {name} = {{{value}}},\n" for name, value in fields.items())
    return f"@{kind}{{{key},\n{body}}}\n"


def fabricated() -> str:
    """A work that does not exist (a not_found entry)."""
    authors = "Gui, Pavel and Tokmakov, Tomoko"
    return _entry(
        "inproceedings", "gui2021", title=FABRICATED, author=authors, booktitle="ICML", year="2021"
    )


def unreachable() -> str:
    """A work DBLP cannot be asked about (an uncertain entry)."""
    return _entry(
        "article", "tide2023", title=UNREACHABLE, author="Orlova, Ines", journal="Graph Letters",
        year="2023",
    )  # fmt: skip


def _dblp(query: dict[str, str]) -> Reply:
    if "tides" in query.get("q", "").lower() or "orlova" in query.get("q", "").lower():
        return Reply(503, b"down")
    empty = {"result": {"status": {"@code": "200"}, "hits": {"@total": "0", "@sent": "0"}}}
    return Reply(200, json.dumps(empty).encode(), JSON)


def _arxiv(query: dict[str, str]) -> Reply:
    name = "id_list-1706.03762-attention-2026.atom"
    if ATTENTION not in query.get("id_list", ""):
        name = "id_list-0000.0000-empty.atom"
    return Reply(200, (FIXTURES / "arxiv" / name).read_bytes(), ATOM)


def route_library(upstream: ReplayUpstream) -> bytes:
    """Every upstream the samples reach; returns the bytes arXiv serves as the PDF."""
    for doi, name in ((PNAS, "10.1073_pnas.1414271111"), (CLOSED, "10.1023_a_1007154515475")):
        upstream.fixture("api.crossref.org", f"/works/{doi}", f"crossref/works-{name}.json")
        upstream.fixture("api.unpaywall.org", f"/v2/{doi}", f"unpaywall/v2-{name}.json")
    upstream.fixture(
        "api.crossref.org", "/works", "crossref/works-query.title-gibberish-zero-results.json"
    )
    upstream.responder("dblp.org", "/search/publ/api", _dblp)
    upstream.responder("export.arxiv.org", "/api/query", _arxiv)
    served = upstream.fixture("arxiv.org", f"/pdf/{ATTENTION}v7", PDF)
    upstream.fixture("arxiv.org", f"/pdf/{ATTENTION}", PDF)
    return served


def with_file(sample: str, path: str) -> str:
    return sample.replace("{FILE}", path)


def csl_text(items: list[dict[str, Any]]) -> str:
    return json.dumps(items, indent=2)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` and its bytes."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }
