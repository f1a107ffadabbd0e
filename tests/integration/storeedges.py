"""A store stocked by hand with one good paper and every kind of broken or hostile file.

Each bad metadata file has its own DOI and a title word no other entry has, so a test
can tell a file that was skipped from one that leaked into a listing. The hostile
files point at ``outside/`` beside the store: a tmp file the test made, never a
system file. (A FIFO, which would hang a reader that follows it, is tested on the
read helper itself, tests/unit/test_confined.py, with a writer that bounds the wait.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from replay import FIXTURES

GOOD_DOI: Final = "10.1038/nature12373"
GOOD_KEY: Final = "doi_10.1038_nature12373"
GOOD_PDF: Final = FIXTURES / "pdf" / "openquestion-jose-paper.pdf"
SECRET: Final = b"outside-the-store secret 7f3a"

# Metadata files that cannot be read: name -> title word that must never be listed.
BAD_METADATA: Final = (
    "notutf8",
    "invalidtoml",
    "truncated",
    "badschema",
    "directory",
    "linkout",
    "linkchain",
    "oversize",
)
# Readable, though a hand edit put tables, arrays and a 65-bit integer where strings
# and a year belong: listed like any other entry.
ODD_TYPES: Final = "oddtypes"
# Entries with readable metadata whose PDF doiget must not serve.
BAD_PDFS: Final = ("pdflinkout", "pdfchain", "notapdf", "pdfdirectory")


def doi(kind: str) -> str:
    return f"10.5555/{kind}"


def key(kind: str) -> str:
    return f"doi_10.5555_{kind}"


def toml_text(doi_value: str, title: str, pdf: Path | None = None) -> str:
    lines = [
        'schema_version = "1.0"',
        f'title = "{title}"',
        f'doi = "{doi_value}"',
        'authors = ["Doe, Jane"]',
        "year = 2020",
    ]
    if pdf is not None:
        lines.append(f'pdf_path = "{pdf}"')
    lines += ["[doiget]", f'ref = "{doi_value}"', 'fetched_at = "2024-01-01T00:00:00Z"']
    return "\n".join(lines) + "\n"


@dataclass
class StockedStore:
    root: Path
    outside: Path
    good_pdf: bytes
    unreadable: list[str] = field(default_factory=list)

    @property
    def metadata(self) -> Path:
        return self.root / ".metadata"


def stock(base: Path) -> StockedStore:
    """``base/papers`` with the good paper, every bad variant, and ``base/outside``."""
    root = base / "papers"
    meta = root / ".metadata"
    outside = base / "outside"
    meta.mkdir(parents=True)
    outside.mkdir()
    good = GOOD_PDF.read_bytes()
    (root / f"{GOOD_KEY}.pdf").write_bytes(good)
    (meta / f"{GOOD_KEY}.toml").write_text(
        toml_text(GOOD_DOI, "Nanometre-scale thermometry", root / f"{GOOD_KEY}.pdf")
    )
    # A valid TOML and a real PDF outside the store: only the link makes them bad.
    (outside / "meta.toml").write_text(toml_text(doi("linkout"), "linkout"))
    (outside / "chain.toml").write_text(toml_text(doi("linkchain"), "linkchain"))
    (outside / "paper.pdf").write_bytes(good)
    (outside / "secret.txt").write_bytes(SECRET)

    def bad(kind: str) -> Path:
        return meta / f"{key(kind)}.toml"

    bad("notutf8").write_bytes(toml_text(doi("notutf8"), "notutf8 \xff").encode("latin-1"))
    bad("invalidtoml").write_text(toml_text(doi("invalidtoml"), "invalidtoml") + "title = [\n")
    bad("truncated").write_text(toml_text(doi("truncated"), "truncated")[:60])
    bad("badschema").write_text(
        toml_text(doi("badschema"), "badschema").replace('"1.0"', '["1.0"]')
    )
    bad("directory").mkdir()
    bad("linkout").symlink_to(outside / "meta.toml")
    (root / "chain-step").symlink_to(outside / "chain.toml")
    bad("linkchain").symlink_to(root / "chain-step")
    bad("oversize").write_text(toml_text(doi("oversize"), "oversize") + "# x\n" * 3_000_000)

    (meta / f"{key(ODD_TYPES)}.toml").write_text(
        'schema_version = "1.0"\ntitle = ["oddtypes", 1]\ndoi = {value = "x"}\n'
        f'year = {2**63}\nauthors = "Doe"\n[doiget]\nref = "{doi(ODD_TYPES)}"\n'
    )
    for kind in BAD_PDFS:
        pdf = root / f"{key(kind)}.pdf"
        (meta / f"{key(kind)}.toml").write_text(toml_text(doi(kind), kind, pdf))
    (root / f"{key('pdflinkout')}.pdf").symlink_to(outside / "paper.pdf")
    (root / "pdf-step").symlink_to(outside / "secret.txt")
    (root / f"{key('pdfchain')}.pdf").symlink_to(root / "pdf-step")
    (root / f"{key('notapdf')}.pdf").write_bytes(SECRET)
    (root / f"{key('pdfdirectory')}.pdf").mkdir()
    return StockedStore(root, outside, good, [f"{key(kind)}.toml" for kind in BAD_METADATA])
