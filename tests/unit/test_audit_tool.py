"""doiget_audit_manuscript's handler: a path confined to the allowed folders or text
inline, progress per cited work and citation, the toolset's verifier and reader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auditfakes import FakeChecker, FakeQuotes, FakeVerifier, problem_draft
from doiget.claims.audit_contracts import AuditManuscript
from doiget.errors import DoigetError
from doiget.runtime import Runtime
from doiget.server.audit_tools import AuditTools


class Call:
    """A tool call from a client that declares ``roots``."""

    def __init__(self, roots: list[Path]) -> None:
        self.progressed: list[tuple[float, int, str]] = []
        self._roots = roots

    async def progress(self, done: float, total: int, message: str) -> None:
        self.progressed.append((done, total, message))

    async def roots(self) -> list[str]:
        return [str(root) for root in self._roots]


@pytest.fixture
def drafts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any, Any]]:
    import doiget.claims.manuscripts as manuscripts

    read: list[tuple[Any, Any, Any]] = []

    def read_manuscript(
        source: Any,
        *,
        fmt: Any = None,
        bib: Any = None,
        text: Any = None,
        bib_text: Any = None,
        within: Any = None,
    ) -> Any:
        read.append((source if text is None else text, fmt, bib if bib_text is None else bib_text))
        if within is not None:  # a file is opened below the allowed folder holding it
            assert source.is_relative_to(within)
        return problem_draft()

    monkeypatch.setattr(manuscripts, "read_manuscript", read_manuscript, raising=False)
    monkeypatch.setattr("doiget.claims.audit.claim_checker", lambda *args: FakeChecker())
    return read


def _tools(runtime: Runtime) -> AuditTools:
    verifier, quotes = FakeVerifier(), FakeQuotes()
    return AuditTools(runtime, lambda: verifier, lambda: quotes)  # type: ignore[arg-type, return-value]


async def test_inline_text_is_audited_with_progress_per_work_and_citation(
    drafts: list[tuple[Any, Any, Any]], runtime: Runtime
) -> None:
    call = Call([])
    request = AuditManuscript(text="Glaciers retreat [1].", format="text", bibliography="[1] Doe.")
    report = await _tools(runtime).audit(request, call)
    assert drafts == [("Glaciers retreat [1].", "text", "[1] Doe.")]
    assert report.summary.citations == 10 and not report.partial
    assert len(call.progressed) == 6 + 10  # six keys verified, ten citations
    assert call.progressed[-1][:2] == (18, 18)  # the last reaches the total
    assert {total for _, total, _ in call.progressed} == {18}  # two keys have no entry


async def test_a_path_inside_a_root_is_read_there_with_its_format(
    drafts: list[tuple[Any, Any, Any]], runtime: Runtime, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    (root / "chapter").mkdir(parents=True)
    draft = root / "chapter" / "draft.txt"
    draft.write_text("Glaciers retreat [1].")
    request = AuditManuscript(path=str(root / "chapter" / ".." / "chapter" / "draft.txt"),
                              format="text")  # fmt: skip
    report = await _tools(runtime).audit(request, Call([root]))
    assert drafts == [(draft.resolve(), "text", None)] and report.summary.citations == 10


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, "path"),
        ({"path": "d.tex", "text": "A claim [1]."}, "path"),
        ({"path": "d.tex", "bibliography": "@article{k, title={T}}"}, "bibliography"),
    ],
)
async def test_a_request_naming_no_one_manuscript_is_refused_before_any_read(
    drafts: list[tuple[Any, Any, Any]], runtime: Runtime, arguments: dict[str, str], field: str
) -> None:
    with pytest.raises(DoigetError) as refused:
        await _tools(runtime).audit(AuditManuscript(**arguments), Call([]))
    assert refused.value.code.value == "INVALID_REF" and refused.value.field == field
    assert drafts == []


async def test_a_path_outside_the_roots_is_refused_before_it_is_read(
    drafts: list[tuple[Any, Any, Any]], runtime: Runtime, tmp_path: Path
) -> None:
    root, outside = tmp_path / "root", tmp_path / "draft.tex"
    root.mkdir()
    outside.write_text("x")
    (root / "escape.tex").symlink_to(outside)
    for path in (outside, root / "escape.tex", root / ".." / "draft.tex"):
        with pytest.raises(DoigetError) as refused:
            await _tools(runtime).audit(AuditManuscript(path=str(path)), Call([root]))
        assert refused.value.code.value == "CAPABILITY_DENIED"
    assert drafts == []
