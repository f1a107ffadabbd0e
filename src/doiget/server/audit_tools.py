"""doiget_audit_manuscript: every citation of a manuscript checked, in the papers toolset.

The manuscript is a file inside the client's roots or DOIGET_IMPORT_DIRS (the folders
doiget_add_pdf reads from, confined the same way), or its text inline with its
bibliography. Reading it is blocking work for seconds: a job of the papers lane, in a
worker process where the lane runs work apart. The audit shares
the toolset's verifier (its answer cache and rate budget) and reader.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from doiget.claims.audit_contracts import AuditManuscript, AuditReport
from doiget.contract import invalid
from doiget.owner import LOCAL, current_owner, owned_by
from doiget.runtime import Runtime
from doiget.server.toolset import Hints, ServedTool, Tool, ToolCall, describe

if TYPE_CHECKING:
    from doiget.claims.manuscripts.model import Manuscript
    from doiget.reading.service import Reader
    from doiget.verify.service import Verifier

T = TypeVar("T")

# Reads local files and the record; stores a PDF only when asked to fetch.
AUDITS = Hints(read_only=False, destructive=False, idempotent=True, open_world=True)


class AuditTools:
    """The audit tool, on the toolset's verifier and reader."""

    def __init__(
        self, runtime: Runtime, verifier: Callable[[], Verifier], reader: Callable[[], Reader]
    ) -> None:
        self.runtime = runtime
        self._verifier = verifier
        self._reader = reader

    async def _pooled(self, work: Callable[[], T]) -> T:
        """``work()`` in the papers lane, never refused half-way through a call."""
        return await self.runtime.pool("papers").run(work, admitted=True)

    async def audit(self, request: AuditManuscript, call: ToolCall) -> AuditReport:
        from doiget.claims.audit import Audit, claim_checker

        manuscript = await self._manuscript(request, call)
        verifier = self._verifier()
        run = Audit(
            manuscript,
            checker=claim_checker(self.runtime, verifier, self._pooled),
            verifier=verifier,
            quotes=self._reader(),
            fetch=request.fetch,
            offload=self._pooled,
        )
        return await run.run(call.progress)

    async def _manuscript(self, request: AuditManuscript, call: ToolCall) -> Manuscript:
        """The manuscript the request names, read in the papers lane."""
        if (request.path is None) == (request.text is None):
            raise invalid(
                "give path (a manuscript file) or text (its text, with format and "
                "bibliography), not both and not neither.",
                field="path",
            )
        if request.text is not None:
            text, fmt, bib = request.text, request.format, request.bibliography
            if fmt is None:
                raise invalid(
                    "say which format the text is in: format latex, markdown or text.",
                    field="format",
                )
            return await self._read(_read_inline, text, fmt, bib)
        if request.bibliography is not None:
            raise invalid(
                "bibliography goes with text; a manuscript file names its own bibliography "
                "(\\bibliography, front matter) or carries it (a .docx's citation fields).",
                field="bibliography",
            )
        # A client's roots are folders on its own machine: honoured over stdio, never
        # from a caller over HTTP (a token must not name the server's files).
        owner = current_owner()
        roots = await call.roots() if owner == LOCAL else []
        allowed = [Path(root) for root in roots] + list(self.runtime.settings.import_dirs)
        path = Path(request.path or "")
        return await self._read(_read_confined, path, allowed, request.format, owner)

    async def _read(self, job: Callable[..., Manuscript], *args: object) -> Manuscript:
        """``job(*args)``: reading a draft is pure Python for seconds (a long LaTeX draft),
        so it runs in a worker process where the papers lane runs work apart, never
        holding this process's interpreter lock; else in a thread of the lane."""
        pool = self.runtime.pool("papers")
        if pool.apart:
            return await pool.run_apart(job, *args)
        return await pool.run(functools.partial(job, *args))

    def specs(self) -> list[ServedTool]:
        """The tool's declaration."""
        return [
            Tool(
                "doiget_audit_manuscript",
                describe(
                    when="Before submitting: check every citation of a draft.",
                    inputs="path (.tex .md .docx .pdf .txt, in the client's roots (stdio) or "
                    "DOIGET_IMPORT_DIRS) or text+format+bibliography (.bib, CSL-JSON, RIS); "
                    "fetch: store OA PDFs.",
                    outputs="summary; citations[] in reading order: place, sentence, status, "
                    "keys[{verdict, problems, integrity, work, quotes}]; works[]; partial.",
                    costs="As doiget_check_claims per citation.",
                    side_effects="With fetch, stores OA PDFs.",
                    limits="1,000 works, each verified once. A source down: partial.",
                ),
                AuditManuscript,
                AuditReport,
                AUDITS,
                self.audit,
            )
        ]


def _read_inline(text: str, fmt: str, bib: str | None) -> Manuscript:
    """The manuscript in ``text`` (no file it names is read)."""
    from doiget.claims.manuscripts import read_manuscript

    manuscript: Manuscript = read_manuscript(Path("manuscript"), text=text, fmt=fmt, bib_text=bib)
    return manuscript


def _read_confined(path: Path, allowed: list[Path], fmt: str | None, owner: str) -> Manuscript:
    """The manuscript at ``path``, refused (CAPABILITY_DENIED) outside the allowed folders;
    it and the files it names are opened below the folder holding it, so a link swapped
    in after this check leads nowhere else. Read for ``owner``, also in a worker process
    (which the caller's context does not reach): a refusal names the server's folders
    to no remote caller."""
    from doiget.claims.manuscripts import read_manuscript
    from doiget.papers.adding import containing

    with owned_by(owner):
        root, real = containing(path, allowed, doing="read manuscripts from")
        manuscript: Manuscript = read_manuscript(real, fmt=fmt, within=root)
    return manuscript
