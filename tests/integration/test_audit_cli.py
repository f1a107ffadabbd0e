"""``doiget audit``: the reports it prints and writes, its exit status, and Ctrl-C.

The draft reader, the claim checker and the verifier are stand-ins here (tests/auditfakes.py),
so the command's own work is what is tested: options, output, files, interruption.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner, Result

from auditfakes import FakeChecker, FakeVerifier, problem_draft
from doiget.claims.manuscripts.model import Manuscript
from doiget.errors import DoigetError, ErrorCode


class Drafts:
    """Stands in for read_manuscript: records its calls, returns the problem draft."""

    def __init__(self, failure: DoigetError | None = None) -> None:
        self.calls: list[tuple[Any, Any, Any]] = []
        self.failure = failure

    def __call__(self, source: Any, *, bib: Any = None, fmt: Any = None) -> Manuscript:
        self.calls.append((source, bib, fmt))
        if self.failure is not None:
            raise self.failure
        return problem_draft()


@pytest.fixture
def checker(monkeypatch: pytest.MonkeyPatch) -> FakeChecker:
    import doiget.claims.manuscripts as manuscripts
    from doiget.verify.service import Verifier

    made = FakeChecker()
    monkeypatch.setattr(manuscripts, "read_manuscript", Drafts(), raising=False)
    monkeypatch.setattr("doiget.claims.audit.claim_checker", lambda *args: made)
    verifier = FakeVerifier()
    monkeypatch.setattr(Verifier, "of", lambda *args, **kwargs: verifier)
    return made


def _audit(env: dict[str, str], *args: str) -> Result:
    from doiget.cli.main import app

    return CliRunner().invoke(app, ["audit", *args], env={**env, "COLUMNS": "200"})


def test_the_audit_prints_json_writes_markdown_and_html_and_exits_0(
    checker: FakeChecker, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    import doiget.claims.manuscripts as manuscripts

    md, html = tmp_path / "out" / "report.md", tmp_path / "out" / "report.html"
    done = _audit(doiget_env, "draft.tex", "--bib", "refs.bib", "--json", "--md", str(md),
                  "--html", str(html))  # fmt: skip
    assert done.exit_code == 0, done.output
    document = json.loads(done.stdout)
    assert document["ok"] is True and document["summary"]["citations"] == 10
    assert document["summary"]["not_real"] == 1 and document["partial"] is False
    assert manuscripts.read_manuscript.calls == [(Path("draft.tex"), Path("refs.bib"), None)]  # type: ignore[attr-defined]
    assert set(checker.fetched) == {True}  # fetching is on by default
    assert md.read_text().startswith("# Citation audit of draft.tex")
    page = html.read_text()
    assert page.startswith("<!doctype html>") and 'id="c10"' in page


def test_the_text_output_lists_problems_first_and_no_fetch_is_passed_on(
    checker: FakeChecker, doiget_env: dict[str, str]
) -> None:
    done = _audit(doiget_env, "draft.md", "--no-fetch", "--format", "markdown")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0].startswith("draft.tex: 10 citations, 8 cited works, 1 not real")
    assert lines[1].startswith("not real") and "draft.tex:4 [ghost]" in lines[1]
    assert lines[-1].startswith("addressed")
    assert set(checker.fetched) == {False}


def test_a_draft_that_cannot_be_read_is_a_coded_error_and_writes_nothing(
    checker: FakeChecker,
    doiget_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import doiget.claims.manuscripts as manuscripts

    unbalanced = DoigetError(
        ErrorCode.INVALID_REF, "draft.tex:12: the brace opened here is never closed; close it."
    )
    monkeypatch.setattr(manuscripts, "read_manuscript", Drafts(unbalanced), raising=False)
    md = tmp_path / "report.md"
    done = _audit(doiget_env, "draft.tex", "--json", "--md", str(md))
    assert done.exit_code != 0
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "INVALID_REF" and "draft.tex:12" in error["message"]
    assert not md.exists() and checker.calls == []


@pytest.mark.parametrize("fmt", ["rtf", "LaTeX ", ""])
def test_an_unknown_format_is_refused_before_the_draft_is_read(
    checker: FakeChecker, doiget_env: dict[str, str], fmt: str
) -> None:
    import doiget.claims.manuscripts as manuscripts

    done = _audit(doiget_env, "draft.tex", "--format", fmt, "--json")
    assert done.exit_code != 0
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "INVALID_REF" and "--format" in error["message"]
    assert manuscripts.read_manuscript.calls == []  # type: ignore[attr-defined]


def test_ctrl_c_writes_what_was_checked_and_names_what_was_not(
    checker: FakeChecker,
    doiget_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Interrupted(FakeChecker):
        async def check_work(self, claim: str, reference: Any, text: Any, *, fetch: bool,
                             key: str | None) -> Any:  # fmt: skip
            if key == "cue":  # the person presses Ctrl-C while this work is checked
                signal.raise_signal(signal.SIGINT)
                await anyio.sleep(60)
            return await super().check_work(claim, reference, text, fetch=fetch, key=key)

    monkeypatch.setattr("doiget.claims.audit.claim_checker", lambda *args: Interrupted())
    # Ctrl-C reaches the command as Python's default handler delivers it, whatever the
    # process running the tests does with the signal (a test worker may ignore it).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        md, html = tmp_path / "report.md", tmp_path / "report.html"
        done = _audit(doiget_env, "draft.tex", "--json", "--md", str(md), "--html", str(html))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert done.exit_code == 130, done.output
    document = json.loads(done.stdout)
    assert document["partial"] is True and document["stopped"] == "interrupted (Ctrl-C)"
    unchecked = [c for c in document["citations"] if not c["checked"]]
    assert unchecked and all(c["note"] == "not checked: interrupted (Ctrl-C)" for c in unchecked)
    assert any(c["keys"][0]["key"] == "cue" for c in unchecked)
    assert document["summary"]["unchecked"] == len(unchecked) < 10
    assert "**Partial report**: interrupted (Ctrl-C)." in md.read_text()
    assert "Partial report" in html.read_text()
