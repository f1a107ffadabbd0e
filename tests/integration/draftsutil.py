"""Drafts citing four works, in every format ``doiget audit`` reads, and the upstream
that answers for those works.

Each draft (LaTeX with a .bib, Pandoc Markdown with CSL-JSON, Word with a Zotero field,
a PDF with numbered citations) cites the same four works in five citations: LongEval,
stored with its PDF (the full text, with pages); the PNAS paper, whose Crossref record
carries its abstract; a work no index holds; and Wakefield's retracted Lancet paper;
the last citation names two works.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claimsutil import PDFS, store_paper
from verifyutil import route_chain_of_thought

from docxmaker import field_runs, instruction, write_docx

from papersutil import route_pnas
from pdfmaker import write_manuscript_pdf
from replay import ReplayUpstream

LONGEVAL = "10.18653/v1/2023.eacl-main.121"
PNAS = "10.1073/pnas.1414271111"
WAKEFIELD = "10.1016/s0140-6736(97)11096-0"

LONGEVAL_TITLE = (
    "LongEval: Guidelines for Human Evaluation of Faithfulness in Long-form Summarization"
)
LONGEVAL_AUTHORS = [
    ("Kalpesh", "Krishna"),
    ("Erin", "Bransom"),
    ("Bailey", "Kuehl"),
    ("Mohit", "Iyyer"),
    ("Pradeep", "Dasigi"),
    ("Arman", "Cohan"),
    ("Kyle", "Lo"),
]
LONGEVAL_VENUE = (
    "Proceedings of the 17th Conference of the European Chapter of the Association for "
    "Computational Linguistics"
)
PNAS_TITLE = (
    "Developing functional musculoskeletal tissues through hypoxia and lysyl "
    "oxidase-induced collagen cross-linking"
)
PNAS_AUTHORS = [
    ("Eleftherios A.", "Makris"),
    ("Donald J.", "Responte"),
    ("Nikolaos K.", "Paschos"),
    ("Jerry C.", "Hu"),
    ("Kyriacos A.", "Athanasiou"),
]
WAKEFIELD_TITLE = (
    "Ileal-lymphoid-nodular hyperplasia, non-specific colitis, and pervasive developmental "
    "disorder in children"
)
GHOST_TITLE = "Glacial Memory in Quantum Entangled Ice Sheets"

# The cited sentences, each a sentence of its cited work (LongEval p. 4; the PNAS abstract).
EXTRACTIVE = "PubMed is more extractive: 54% of summary bigrams are present in the source"
CROSSLINKS = "Collagen cross-links correlate with the mechanical integrity of tissues"
AUTISM = "Intestinal inflammation was found in children with developmental regression"
GLACIERS = "Ice sheets remember the glaciers that formed them"

CITATIONS = 5  # in every draft
# The cited works, by the keys every draft gives them.
WORKS = ("longeval", "makris", "wakefield", "ghost")


def longeval_record() -> dict[str, Any]:
    """LongEval's Crossref record: the fields the verifier compares a reference with."""
    return {
        "status": "ok",
        "message-type": "work",
        "message": {
            "DOI": LONGEVAL,
            "type": "proceedings-article",
            "title": [LONGEVAL_TITLE],
            "author": [
                {"given": g, "family": f, "sequence": "additional"} for g, f in LONGEVAL_AUTHORS
            ],
            "container-title": [LONGEVAL_VENUE],
            "publisher": "Association for Computational Linguistics",
            "issued": {"date-parts": [[2023]]},
            "URL": f"https://doi.org/{LONGEVAL}",
        },
    }


def route_works(upstream: ReplayUpstream, env: dict[str, str]) -> None:
    """Every index answers from its recording; LongEval is in the store with its PDF."""
    route_chain_of_thought(upstream)  # Wakefield, PNAS; no hit for any other search
    route_pnas(upstream)  # PNAS's Open Access copy is on a host off the allowlist
    upstream.json("api.crossref.org", f"/works/{LONGEVAL}", longeval_record())
    store_paper(
        Path(env["DOIGET_STORE_ROOT"]), LONGEVAL, PDFS / "acl-2023.eacl-main.121-longeval.pdf"
    )


def lowered(sentence: str) -> str:
    return sentence[0].lower() + sentence[1:]


def bibtex_name(authors: list[tuple[str, str]]) -> str:
    return " and ".join(f"{family}, {given}" for given, family in authors)


BIB = f"""@inproceedings{{longeval,
  title = {{{LONGEVAL_TITLE}}},
  author = {{{bibtex_name(LONGEVAL_AUTHORS)}}},
  booktitle = {{{LONGEVAL_VENUE}}},
  year = {{2023}},
  doi = {{{LONGEVAL}}}
}}
@article{{makris,
  title = {{{PNAS_TITLE}}},
  author = {{{bibtex_name(PNAS_AUTHORS)}}},
  journal = {{Proceedings of the National Academy of Sciences}},
  volume = {{111}},
  year = {{2014}},
  doi = {{{PNAS}}}
}}
@article{{wakefield,
  title = {{{WAKEFIELD_TITLE}}},
  author = {{Wakefield, A. J. and Murch, S. H. and Anthony, A.}},
  journal = {{The Lancet}},
  year = {{1998}},
  doi = {{{WAKEFIELD}}}
}}
@article{{ghost,
  title = {{{GHOST_TITLE}}},
  author = {{Frostholm, Ingrid and Nakamura-Pell, Tobias}},
  journal = {{Journal of Cryospheric Memory}},
  year = {{2021}}
}}
"""

EXTRACTIVE_TEX = EXTRACTIVE.replace("%", r"\%")
LATEX = rf"""\documentclass{{article}}
\begin{{document}}
\section{{Introduction}}
Long documents are hard to judge.
Compared to SQuALITY, {EXTRACTIVE_TEX} \citep[p.~4]{{longeval}}.
% A citation in a comment is no citation: \cite{{ghost}}.
\citet{{makris}} found that {lowered(CROSSLINKS)}.
{AUTISM} \cite{{wakefield}}, and {lowered(GLACIERS)} \cite{{ghost}}.
Both works bear on evaluation \cite{{longeval,makris}}.
Write to someone@example.org for the data.
\bibliography{{refs}}
\end{{document}}
"""


def csl_item(
    key: str, title: str, authors: list[tuple[str, str]], year: int, doi: str | None, container: str
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": key,
        "type": "article-journal",
        "title": title,
        "author": [{"given": given, "family": family} for given, family in authors],
        "container-title": container,
        "issued": {"date-parts": [[year]]},
    }
    if doi is not None:
        item["DOI"] = doi
    return item


CSL = [
    csl_item("longeval", LONGEVAL_TITLE, LONGEVAL_AUTHORS, 2023, LONGEVAL, LONGEVAL_VENUE),
    csl_item(
        "makris",
        PNAS_TITLE,
        PNAS_AUTHORS,
        2014,
        PNAS,
        "Proceedings of the National Academy of Sciences",
    ),
    csl_item(
        "wakefield",
        WAKEFIELD_TITLE,
        [("A. J.", "Wakefield"), ("S. H.", "Murch")],
        1998,
        WAKEFIELD,
        "The Lancet",
    ),
    csl_item(
        "ghost",
        GHOST_TITLE,
        [("Ingrid", "Frostholm"), ("Tobias", "Nakamura-Pell")],
        2021,
        None,
        "Journal of Cryospheric Memory",
    ),
]

MARKDOWN = f"""---
title: A draft
bibliography: refs.json
---

# Introduction

Compared to SQuALITY, {EXTRACTIVE} [@longeval, p. 4].
@makris [p. 2] found that {lowered(CROSSLINKS)}.
{AUTISM} [see @wakefield], and {lowered(GLACIERS)} [@ghost].
Both works bear on evaluation [@longeval; @makris].
Write to someone@example.org for the data.
"""


def latex_draft(folder: Path) -> Path:
    (folder / "refs.bib").write_text(BIB)
    draft = folder / "draft.tex"
    draft.write_text(LATEX)
    return draft


def markdown_draft(folder: Path) -> Path:
    (folder / "refs.json").write_text(json.dumps(CSL))
    draft = folder / "draft.md"
    draft.write_text(MARKDOWN)
    return draft


def zotero_field(*keys: str) -> tuple[str, ...]:
    """A Zotero field citing ``keys``, its instruction split over several runs."""
    items = [
        {"id": n, "uris": [f"http://zotero.org/users/1/items/{k}"], "itemData": {**item, "id": n}}
        for n, k in enumerate(keys)
        for item in CSL
        if item["id"] == k
    ]
    return tuple(field_runs(instruction(items), "(cited)", 4))


def docx_draft(folder: Path) -> Path:
    return write_docx(
        folder / "draft.docx",
        [
            ["Long documents are hard to judge."],
            [f"Compared to SQuALITY, {EXTRACTIVE} ", zotero_field("longeval"), "."],
            [f"{CROSSLINKS} ", zotero_field("makris"), "."],
            [
                f"{AUTISM} ",
                zotero_field("wakefield"),
                f", and {lowered(GLACIERS)} ",
                zotero_field("ghost"),
                ".",
            ],
            ["Both works bear on evaluation ", zotero_field("longeval", "makris"), "."],
        ],
    )


def reference_entry(item: dict[str, Any]) -> str:
    """``item`` as a numbered (IEEE) reference list prints it."""
    names = ", ".join(
        " ".join(f"{given[0]}." for given in author["given"].split()) + f" {author['family']}"
        for author in item["author"]
    )
    doi = f", doi: {item['DOI']}" if "DOI" in item else ""
    year = item["issued"]["date-parts"][0][0]
    return f'{names}, "{item["title"]}," {item["container-title"]}, {year}{doi}.'


def pdf_draft(folder: Path) -> Path:
    draft = folder / "draft.pdf"
    body = (
        f"Long documents are hard to judge. Compared to SQuALITY, {EXTRACTIVE} [1]. "
        f"{CROSSLINKS} [2]. {AUTISM} [3], and {lowered(GLACIERS)} [4]. "
        "Both works bear on evaluation [1, 2]."
    )
    write_manuscript_pdf(draft, [reference_entry(item) for item in CSL], body=body)
    return draft


def work_of_key(draft_key: str) -> str:
    """The cited work a key of any draft names (a Zotero URI ends in the key; a PDF's
    keys are the numbers of its reference list, in the order of WORKS)."""
    if draft_key.isdigit():
        return WORKS[int(draft_key) - 1]
    for work in WORKS:
        if draft_key == work or draft_key.endswith(f"/{work}"):
            return work
    raise AssertionError(f"unexpected key {draft_key}")
