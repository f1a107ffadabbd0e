"""A manuscript read for a caller bound to a folder (a client's root, an import folder):
the draft is opened once below that folder, so a link swapped in after the check leads
nowhere else; the files it names stay in its own folder and below the allowed one; and
no reason a file was not read names where a link leads."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from doiget.claims.audit_contracts import AuditManuscript
from doiget.claims.manuscripts import read_manuscript
from doiget.errors import DoigetError
from doiget.owner import owned_by
from doiget.runtime import Runtime
from doiget.server.audit_tools import AuditTools

SECRET = "secret-key-of-the-server"
BIB = "@article{{{key}, title = {{A title}}, author = {{Doe, Jane}}, year = 2020}}\n"
DRAFTS = {
    "draft.md": f"Glaciers retreat [@{SECRET}].\n",
    "draft.txt": f"Glaciers retreat [1].\n\nReferences\n\n[1] Doe J. {SECRET}. 2020.\n",
    "draft.tex": f"Glaciers retreat \\cite{{{SECRET}}}.\n",
}


class Call:
    """A tool call from a client that declares ``roots``."""

    def __init__(self, roots: list[Path]) -> None:
        self._roots = roots

    async def progress(self, done: float, total: int, message: str) -> None:
        """No progress is expected: every call here is refused."""

    async def roots(self) -> list[str]:
        return [str(root) for root in self._roots]


def _tools(runtime: Runtime) -> AuditTools:
    def unused() -> Any:
        raise AssertionError("a refused draft reaches no verifier or reader")

    return AuditTools(runtime, unused, unused)


def _outside(tmp_path: Path) -> Path:
    """A folder outside the allowed one, holding a draft of each format."""
    outside = tmp_path / "server-files"
    (outside / "chapter").mkdir(parents=True)
    for name, text in DRAFTS.items():
        (outside / name).write_text(text)
        (outside / "chapter" / name).write_text(text)
    return outside


def _swap_file(root: Path, outside: Path, name: str) -> Callable[[], None]:
    def swap() -> None:
        (root / "chapter" / name).unlink()
        (root / "chapter" / name).symlink_to(outside / name)

    return swap


def _swap_folder(root: Path, outside: Path, name: str) -> Callable[[], None]:
    def swap() -> None:
        shutil.rmtree(root / "chapter")
        (root / "chapter").symlink_to(outside / "chapter", target_is_directory=True)

    return swap


@pytest.mark.parametrize("name", sorted(DRAFTS))
@pytest.mark.parametrize("swap", [_swap_file, _swap_folder], ids=["file", "folder"])
async def test_a_link_swapped_in_after_the_check_is_never_followed_out(
    runtime: Runtime,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    swap: Callable[[Path, Path, str], Callable[[], None]],
) -> None:
    import doiget.papers.adding as adding

    root, outside = tmp_path / "allowed", _outside(tmp_path)
    (root / "chapter").mkdir(parents=True)
    (root / "chapter" / name).write_text("An innocent draft.\n")
    checked = adding.containing
    swapped = swap(root, outside, name)

    def containing(*args: Any, **kwargs: Any) -> tuple[Path, Path]:
        found = checked(*args, **kwargs)
        swapped()  # the race: a link planted between the check and the read
        return found

    monkeypatch.setattr(adding, "containing", containing)
    request = AuditManuscript(path=str(root / "chapter" / name))
    with pytest.raises(DoigetError) as refused:
        await _tools(runtime).audit(request, Call([root]))
    assert refused.value.code.value in ("CAPABILITY_DENIED", "INVALID_REF")
    assert str(outside) not in refused.value.message


@pytest.mark.parametrize(
    "include",
    [
        "\\input{linked}",  # a link in the draft's folder to a file outside every folder
        "\\input{sibling/part}",  # a link to a folder beside it, inside the allowed one
        "\\include{../beside}",  # a file beside the draft's folder
        "\\input{/etc/hostname}",  # an absolute path
    ],
)
@pytest.mark.parametrize("bound", [True, False], ids=["server", "cli"])
def test_a_file_the_draft_includes_stays_in_its_folder_and_no_reason_names_a_path(
    tmp_path: Path, include: str, bound: bool
) -> None:
    root, outside = tmp_path / "allowed", _outside(tmp_path)
    (root / "draft" / "").mkdir(parents=True)
    (root / "other").mkdir()
    (root / "other" / "part.tex").write_text(f"\\cite{{{SECRET}}}\n")
    (root / "beside.tex").write_text(f"\\cite{{{SECRET}}}\n")
    (root / "draft" / "linked.tex").symlink_to(outside / "draft.tex")
    (root / "draft" / "sibling").symlink_to(root / "other", target_is_directory=True)
    draft = root / "draft" / "main.tex"
    draft.write_text(f"Glaciers retreat \\cite{{a}}.\n{include}\n")
    with pytest.raises(DoigetError) as refused:
        read_manuscript(draft, **({"within": root} if bound else {}))
    message = refused.value.message
    assert refused.value.code.value == "INVALID_REF" and "main.tex line 2" in message
    assert str(tmp_path) not in message and "/etc/hostname" not in message.split(":", 2)[-1]


@pytest.mark.parametrize(
    "named",
    [
        "linked",  # a link leading out of every folder
        "sibling/refs",  # through a link to a folder beside the draft's
        "../refs",  # beside the draft's folder
    ],
)
@pytest.mark.parametrize("fmt", ["latex", "markdown"])
def test_a_bibliography_the_draft_names_stays_in_its_folder_and_its_note_names_no_path(
    tmp_path: Path, named: str, fmt: str
) -> None:
    root, outside = tmp_path / "allowed", _outside(tmp_path)
    (root / "draft").mkdir(parents=True)
    (root / "other").mkdir()
    for bib in (outside / "refs.bib", root / "other" / "refs.bib", root / "refs.bib"):
        bib.write_text(BIB.format(key=SECRET))
    (root / "draft" / "linked.bib").symlink_to(outside / "refs.bib")
    (root / "draft" / "sibling").symlink_to(root / "other", target_is_directory=True)
    if fmt == "latex":
        draft = root / "draft" / "main.tex"
        draft.write_text(f"Glaciers retreat \\cite{{{SECRET}}}.\n\\bibliography{{{named}}}\n")
    else:
        draft = root / "draft" / "main.md"
        draft.write_text(f"---\nbibliography: {named}.bib\n---\nGlaciers retreat [@{SECRET}].\n")
    manuscript = read_manuscript(draft, within=root)
    assert manuscript.bibliography[SECRET].reference is None  # not read
    assert manuscript.notes and all(str(tmp_path) not in note for note in manuscript.notes)


async def test_over_http_a_path_in_the_clients_roots_is_never_read(
    runtime: Runtime, tmp_path: Path
) -> None:
    root = tmp_path / "the-servers-files"
    root.mkdir()
    (root / "draft.md").write_text(DRAFTS["draft.md"])
    with owned_by("a-token-holder"), pytest.raises(DoigetError) as refused:
        await _tools(runtime).audit(AuditManuscript(path=str(root / "draft.md")), Call([root]))
    assert refused.value.code.value == "CAPABILITY_DENIED"
    assert str(root) not in refused.value.message.split(" is outside", 1)[1]


@pytest.mark.parametrize("target", ["loop", "a\x00b", "sub/../loop"])
@pytest.mark.parametrize("bound", [True, False], ids=["server", "cli"])
def test_an_include_that_loops_or_names_no_file_is_a_coded_refusal(
    tmp_path: Path, target: str, bound: bool
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "loop.tex").symlink_to(tmp_path / "loop.tex")
    draft = tmp_path / "main.tex"
    draft.write_text(f"Glaciers retreat \\cite{{a}}.\n\\input{{{target}}}\n")
    with pytest.raises(DoigetError) as refused:
        read_manuscript(draft, **({"within": tmp_path} if bound else {}))
    assert refused.value.code.value == "INVALID_REF"
    assert "main.tex line 2" in refused.value.message


@pytest.mark.parametrize("fmt", ["latex", "markdown"])
def test_a_bibliography_that_loops_or_names_no_file_is_a_note(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "loop.bib").symlink_to(tmp_path / "loop.bib")
    if fmt == "latex":
        draft = tmp_path / "main.tex"
        draft.write_text("Glaciers retreat \\cite{a}.\n\\bibliography{loop,a\x00b}\n")
    else:
        draft = tmp_path / "main.md"
        draft.write_text('---\nbibliography: [loop.bib, "a\\0b.bib"]\n---\nIce [@a].\n')
    manuscript = read_manuscript(draft, within=tmp_path)
    assert len(manuscript.notes) == 2 and manuscript.bibliography["a"].reference is None


@pytest.mark.parametrize("name", ["loop.md", "a\x00b.md"])
async def test_a_draft_path_that_loops_or_names_no_file_is_a_coded_refusal(
    runtime: Runtime, tmp_path: Path, name: str
) -> None:
    (tmp_path / "loop.md").symlink_to(tmp_path / "loop.md")
    with pytest.raises(DoigetError) as refused:
        await _tools(runtime).audit(AuditManuscript(path=str(tmp_path / name)), Call([tmp_path]))
    assert refused.value.code.value == "INVALID_REF"


def _bibliographies(tmp_path: Path, fmt: str, names: list[str]) -> Path:
    if fmt == "latex":
        draft = tmp_path / "main.tex"
        draft.write_text(f"Ice \\cite{{k1}}.\n\\bibliography{{{','.join(names)}}}\n")
    else:
        draft = tmp_path / "main.md"
        listed = ", ".join(f'"{name}.bib"' for name in names)
        draft.write_text(f"---\nbibliography: [{listed}]\n---\nIce [@k1].\n")
    return draft


@pytest.mark.parametrize("fmt", ["latex", "markdown"])
@pytest.mark.parametrize(
    "names",
    [
        ["refs"] * 1_000,  # one file named over and over
        ["refs", "./refs", "sub/../refs", "link"] * 250,  # spelled differently
    ],
    ids=["repeated", "respelled"],
)
def test_the_bibliographies_a_draft_names_are_read_within_one_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, names: list[str]
) -> None:
    import doiget.claims.manuscripts.bibfiles as bibfiles

    reads: list[Path] = []
    real = bibfiles.read_beside

    def counted(folder: Path, path: Path, limit: int, within: Path | None) -> bytes:
        reads.append(path)
        return real(folder, path, limit, within)

    monkeypatch.setattr(bibfiles, "read_beside", counted)
    (tmp_path / "sub").mkdir()
    bib = "".join(BIB.format(key=f"k{n}") for n in range(40))
    (tmp_path / "refs.bib").write_text(bib)
    (tmp_path / "link.bib").symlink_to(tmp_path / "refs.bib")
    monkeypatch.setattr(bibfiles, "MAX_BIB_BYTES", len(bib.encode()) * 2)
    manuscript = read_manuscript(_bibliographies(tmp_path, fmt, names), within=tmp_path)
    assert manuscript.bibliography["k1"].reference is not None
    assert len(reads) <= 4  # each distinct name once; past the budget nothing is parsed
    assert any("bytes together" in note for note in manuscript.notes) is (len(set(names)) > 2)


@pytest.mark.parametrize("fmt", ["latex", "markdown"])
def test_a_draft_naming_thousands_of_bibliographies_is_read_in_bounds(
    tmp_path: Path, fmt: str
) -> None:
    from doiget.claims.manuscripts.bibfiles import MAX_BIB_FILES

    names = [f"refs{n}" for n in range(5_000)]
    manuscript = read_manuscript(_bibliographies(tmp_path, fmt, names), within=tmp_path)
    assert len(manuscript.notes) == MAX_BIB_FILES + 1
    assert f"names 5,000 bibliographies; the first {MAX_BIB_FILES}" in manuscript.notes[0]
