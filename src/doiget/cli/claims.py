"""``doiget claim``: does the cited work say what a sentence claims? With ``--json`` it
prints what doiget_check_claims returns."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from doiget.cli.output import JsonFlag, console, emit_json, handles_errors, runtime, wants_json
from doiget.contract import build, invalid, plain

if TYPE_CHECKING:
    from doiget.claims.contracts import CheckClaims, ClaimChecks, ClaimResult, WorkCheck

_COLOURS = {"addressed": "green", "partly": "yellow", "not_addressed": "red", "unavailable": "blue"}


def _inline(source: str) -> str:
    """The text of ``source`` (a file, or - for stdin), refused past what a call takes."""
    from doiget.claims.contracts import MAX_INLINE_CHARS

    name = "stdin" if source == "-" else source
    try:
        if source == "-":
            text = sys.stdin.read(MAX_INLINE_CHARS + 1)
        else:
            with Path(source).open(encoding="utf-8") as handle:
                text = handle.read(MAX_INLINE_CHARS + 1)
    except UnicodeDecodeError:
        raise invalid(f"{name} is not UTF-8 text; pass the source's text as UTF-8.") from None
    except OSError as error:
        raise invalid(f"{name} cannot be read ({error.strerror}); check the path.") from None
    if len(text) > MAX_INLINE_CHARS:
        raise invalid(
            f"{name} is longer than {MAX_INLINE_CHARS:,} characters; pass the passage that "
            "matters, or store the paper and cite its ref."
        )
    return text


def _where(page: int | None, section: str | None, start: int | None) -> str:
    if page is not None:
        return f"p. {page}" + (f", {section}" if section else "")
    return f"at {start}" if start is not None else ""


def _show_work(work: WorkCheck) -> None:
    out = console()
    confidence = f" ({work.confidence:.2f})" if work.confidence is not None else ""
    out.print(
        Text.assemble(
            (f"{work.addressed:<13}", _COLOURS[work.addressed]),
            f" {work.ref or work.key or 'the source'}{confidence}  basis: {work.basis}",
        )
    )
    if work.basis_note:
        out.print(Text(f"    {work.basis_note}", style="dim"))
    if work.verification is not None and work.verification.verdict != "verified":
        out.print(f"    reference {work.verification.verdict}: {work.verification.note or ''}")
    for number, evidence in enumerate(work.evidence, 1):
        where = _where(evidence.page, evidence.section, evidence.start)
        out.print(f"  {number}. [{where}] ({evidence.score:.2f}, {evidence.role}) {evidence.text}")
    for cue in work.cues:
        out.print(
            Text.assemble(
                (f"    {cue.kind} cue", "yellow"),
                f": the claim says {cue.claim_span!r}, evidence {cue.evidence + 1} says "
                f"{cue.source_span!r}",
            )
        )


def _show(result: ClaimResult) -> None:
    if result.error is not None:
        console().print(f"{result.error['code']}: {result.error['message']}", style="red")
    for work in result.works:
        _show_work(work)


@handles_errors
def claim(
    ctx: typer.Context,
    sentence: Annotated[
        str, typer.Argument(metavar="SENTENCE", help="The claim: the sentence that cites.")
    ],
    refs: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[REF]...",
            help="What it cites: DOIs, arXiv ids, store keys, BibTeX or free-text "
            "references; each answered apart.",
        ),
    ] = None,
    text: Annotated[
        str | None,
        typer.Option("--text", help="The source's text, from a file or - for stdin."),
    ] = None,
    fetch: Annotated[
        bool,
        typer.Option(
            "--fetch/--no-fetch",
            help="Fetch a work's Open Access PDF into the store when it has none.",
        ),
    ] = True,
    json_output: JsonFlag = False,
) -> None:
    """Whether the cited works say what SENTENCE claims: per work, the text used (basis),
    addressed or not, the evidence with its page and section, and cues where the claim
    and the evidence differ. Exit 0 whatever the answer."""
    from doiget.claims.contracts import CheckClaims, ClaimItem

    cited = list(refs or [])
    if text is None and not cited:
        raise invalid("give at least one REF, or the source's text with --text.")
    if text is not None and len(cited) > 1:
        raise invalid("--text is one work's text: give it with one REF or none.")
    ref: str | list[str] | None = cited if len(cited) > 1 else (cited[0] if cited else None)
    item = build(ClaimItem, claim=sentence, ref=ref, text=None if text is None else _inline(text))
    result = _check(ctx, build(CheckClaims, items=[item], fetch=fetch))
    if wants_json(ctx, json_output):
        emit_json(plain(result))
    else:
        _show(result.results[0])


def _check(ctx: typer.Context, request: CheckClaims) -> ClaimChecks:
    import anyio

    from doiget.claims.service import ClaimChecker
    from doiget.verify.service import Verifier

    shared = runtime(ctx)

    async def work() -> ClaimChecks:
        try:
            return await ClaimChecker.of(shared, verifier=Verifier.of(shared)).check(request)
        finally:
            await shared.aclose()

    return anyio.run(work)
