"""Research sessions: sequential_search, get_research_session and research_export.

A session is an agent's research trail: a goal, numbered steps (with revisions and
branches), the knowledge gaps it noted and the sources the web and scholar tools
found while called with its ``sessionId``. The server records and renders; it never
writes an answer.

Stored data is append-only: a revision is a new step naming the one it revises, and
every read derives ``supersededBy`` on the revised step (the latest step revising
it) without touching what was stored.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from doiget.config import Settings
from doiget.errors import DoigetError
from doiget.refs import parse_ref
from doiget.web.failure import Kind, web_error
from doiget.web.outcome import TRUST, rfc3339
from doiget.web.requests import (
    SESSION_ID_PATTERN,
    ResearchExportRequest,
    ResearchSessionRequest,
    ResearchStepRequest,
)
from doiget.web.results import OneStep, ResearchExportResult, SessionSummary, StepRecorded
from doiget.web.urls import url_key
from doiget.wording import counted

if TYPE_CHECKING:
    from doiget.net.network import Network

from doiget.web.sessions import (
    SESSION_TTL,
    Session,
    SessionStore,
    open_session_store,
    session_missing,
)

MAX_STEPS: Final = 200
MAX_SOURCES: Final = 500
# sequential_search lists every step in full up to this many, then summarises.
FULL_MODE_MAX_STEPS: Final = 8
LAST_STEPS: Final = 3
# sequential_search echoes the most recent sources; get_research_session lists all.
RECENT_SOURCES: Final = 10
STEP_WARNING_AT: Final = MAX_STEPS - 10
ONE_LINER_CHARS: Final = 120
SESSION_FORMAT: Final = 1
_SESSION_ID_SHAPE: Final = re.compile(SESSION_ID_PATTERN)
_SOURCE_KINDS: Final = ("web", "paper", "patent")


def paper_sources(papers: Sequence[Any]) -> list[dict[str, Any]]:
    """Papers as the academic and scholar tools return them, in the shape
    :meth:`Research.record_sources` takes: authors as names (``{name}`` objects
    unwrapped, "et al." dropped), the DOI also when it is only the paper's ``ref``, the
    year also from a ``published`` date."""
    found = []
    for paper in papers:
        if not isinstance(paper, dict):
            continue
        source: dict[str, Any] = {"url": paper.get("url"), "title": paper.get("title")}
        ref = paper.get("ref")
        doi = paper.get("doi") or (ref if isinstance(ref, str) and ref.startswith("10.") else None)
        if doi:
            source["doi"] = doi
        names = [a.get("name") if isinstance(a, dict) else a for a in paper.get("authors") or []]
        source["authors"] = [n for n in names if isinstance(n, str) and n and n != "et al."]
        year = str(paper.get("year") or paper.get("published") or "")[:4]
        if year.isdigit():
            source["year"] = int(year)
        if paper.get("journal"):
            source["journal"] = paper["journal"]
        found.append({**source, "kind": "paper"})
    return found


class Research:
    """One per process: the session store is opened on first use."""

    def __init__(
        self, settings: Settings, network: Network, clock: Callable[[], float] = time.time
    ) -> None:
        self.settings = settings
        self.network = network
        self._clock = clock
        self._store: SessionStore | None = None

    def _sessions(self) -> SessionStore:
        if self._store is None:
            try:
                self._store = open_session_store(self.settings, self._clock)
            except OSError as exc:
                raise web_error(
                    Kind.INTERNAL,
                    f"cannot open the research session store: {exc.strerror or exc}.",
                    suggested_action="Make DOIGET_DATA_DIR writable, then retry.",
                ) from exc
        return self._store

    async def aclose(self) -> None:
        """Close the session store."""
        if self._store is not None:
            await self._store.aclose()
            self._store = None

    # -- sequential_search ---------------------------------------------------------

    async def step(self, request: ResearchStepRequest) -> StepRecorded:
        """sequential_search: record one step and return the session so far."""
        now = self._clock()
        step = _new_step(request, rfc3339(now))
        number = step["stepNumber"]
        goal = _stripped(request.research_goal)
        session_id = request.session_id
        if session_id is None:
            if number != 1:
                raise web_error(
                    Kind.VALIDATION,
                    f"stepNumber {number} needs the sessionId that step 1 returned.",
                    suggested_action="Pass that sessionId (get_research_session shows a "
                    "session's state), or start a new session with stepNumber 1 and no "
                    "sessionId.",
                )
            session_id = secrets.token_hex(16)
            session = _new_session(session_id, rfc3339(now))
            _add_step(session, step, goal)
            await self._sessions().create(session_id, session)
        else:
            session_id = _checked_id(session_id)
            session = await self._sessions().update(
                session_id, lambda stored: _add_step(stored, step, goal)
            )
        return StepRecorded.model_validate(_step_view(session, number))

    # -- get_research_session ------------------------------------------------------

    async def session(self, request: ResearchSessionRequest) -> SessionSummary | OneStep:
        """get_research_session: the summary view, or one step in full with ``stepId``."""
        session = await self._load(request.session_id)
        step_id = request.step_id
        if step_id is None:
            return SessionSummary.model_validate(_summary_view(session))
        document = session_document(session)
        chosen = next((s for s in document["steps"] if s["stepNumber"] == step_id), None)
        if chosen is None:
            raise web_error(
                Kind.VALIDATION,
                f"Step {step_id} not found — this session has steps {_numbers(session)}.",
                suggested_action="Ask for one of the listed steps, or leave stepId out for "
                "the session summary.",
            )
        return OneStep.model_validate(
            {
                "sessionId": session["id"],
                "responseMode": "step",
                "researchGoal": session["researchGoal"],
                "step": chosen,
                "trust": TRUST,
            }
        )

    # -- sources from the other tools ---------------------------------------------

    async def require(self, session_id: str) -> None:
        """Raise NOT_FOUND unless ``session_id`` names a live session.

        Tools called with a sessionId check it before doing any work.
        """
        await self._load(session_id)

    async def record_sources(
        self, session_id: str, tool: str, sources: Sequence[Mapping[str, Any]]
    ) -> None:
        """Add what ``tool`` found to the session; NOT_FOUND if it has gone.

        ``sources`` are ``{url, title, doi?, authors? ("Family, Given"), year?,
        journal?, kind: web|paper|patent}``. A source already recorded (same DOI,
        else same normalised URL) is completed, not repeated; entries without a
        usable URL or DOI are skipped; beyond :data:`MAX_SOURCES` they are counted
        as dropped.
        """
        session_id = _checked_id(session_id)
        found_at = rfc3339(self._clock())
        cleaned = [clean for source in sources if (clean := _clean_source(source, tool, found_at))]
        if not cleaned:
            await self.require(session_id)
            return
        await self._sessions().update(session_id, lambda stored: _merge_sources(stored, cleaned))

    # -- research_export -----------------------------------------------------------

    async def export(self, request: ResearchExportRequest) -> ResearchExportResult:
        """research_export: the session rendered as a report, JSON or a bibliography."""
        from doiget.web.export import check_links, render

        session = await self._load(request.session_id)
        document = session_document(session)
        result = ResearchExportResult(
            session_id=session["id"],
            format=request.format,
            research_goal=session["researchGoal"],
            step_count=len(document["steps"]),
            source_count=len(document["sources"]),
            started_at=session["startedAt"],
            exported_at=rfc3339(self._clock()),
            document=render(request.format, document),
            trust=TRUST,
        )
        if request.verify_links:
            urls = [source["url"] for source in document["sources"]]
            result.link_status = await check_links(self.network, urls)
        return result

    async def _load(self, session_id: Any) -> Session:
        checked = _checked_id(session_id)
        session = await self._sessions().load(checked)
        if session is None:
            raise session_missing(checked)
        return session


# -- input --------------------------------------------------------------------------


def _checked_id(session_id: Any) -> str:
    if not isinstance(session_id, str) or not _SESSION_ID_SHAPE.fullmatch(session_id):
        raise web_error(
            Kind.VALIDATION,
            "sessionId must be the id sequential_search returned (letters, digits, _ and -).",
            field="sessionId",
        )
    return session_id


def _stripped(text: str | None) -> str | None:
    """``text`` without surrounding blanks; None when nothing is left."""
    return (text or "").strip() or None


def _new_step(request: ResearchStepRequest, recorded_at: str) -> dict[str, Any]:
    """The stored form of one step (absent fields left out)."""
    search_step = _stripped(request.search_step)
    number = request.step_number
    if search_step is None:
        raise web_error(
            Kind.VALIDATION,
            "sequential_search needs searchStep (text), stepNumber (from 1) and "
            "nextStepNeeded (true or false).",
        )
    step: dict[str, Any] = {
        "stepNumber": number,
        "searchStep": search_step,
        "nextStepNeeded": request.next_step_needed,
        "recordedAt": recorded_at,
        "reasoning": _stripped(request.reasoning),
        "knowledgeGap": _stripped(request.knowledge_gap),
        "revisesStep": request.revises_step,
        "branchFromStep": request.branch_from_step,
        "branchId": request.branch_id,
        "confidence": request.confidence,
    }
    if request.rejected_approaches is not None:
        step["rejectedApproaches"] = [
            item.strip() for item in request.rejected_approaches if item.strip()
        ]
    if request.is_revision and step["revisesStep"] is None:
        raise web_error(
            Kind.VALIDATION,
            "isRevision is true but revisesStep is missing; name the step this one revises.",
        )
    if step["revisesStep"] is not None:
        step["isRevision"] = True
    if step["branchFromStep"] is not None and step["branchId"] is None:
        step["branchId"] = f"branch-{number}"
    return {name: value for name, value in step.items() if value not in (None, [])}


def _new_session(session_id: str, started_at: str) -> Session:
    return {
        "format": SESSION_FORMAT,
        "id": session_id,
        "researchGoal": "",
        "startedAt": started_at,
        "updatedAt": started_at,
        "steps": [],
        "gaps": [],
        "sources": [],
        "sourcesDropped": 0,
    }


def _numbers(session: Session) -> str:
    """The session's step numbers for a message: '1-5', '1-3, 5', or 'none yet'."""
    numbers = sorted(step["stepNumber"] for step in session["steps"])
    if not numbers:
        return "none yet"
    runs: list[str] = []
    start = prev = numbers[0]
    for number in [*numbers[1:], None]:
        if number is not None and number == prev + 1:
            prev = number
            continue
        runs.append(str(start) if start == prev else f"{start}-{prev}")
        if number is not None:
            start = prev = number
    return ", ".join(runs)


def _same_step(stored: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    ignore = {"recordedAt"}
    return {k: v for k, v in stored.items() if k not in ignore} == {
        k: v for k, v in new.items() if k not in ignore
    }


def _add_step(session: Session, step: dict[str, Any], goal: str | None) -> Session:
    """Append ``step`` (validated against the session) and return the session.

    A step resent unchanged (a retried call) is taken as already recorded.
    """
    number = step["stepNumber"]
    existing = {s["stepNumber"]: s for s in session["steps"]}
    if number in existing:
        if _same_step(existing[number], step):
            return session
        raise web_error(
            Kind.VALIDATION,
            f"step {number} is already recorded in session {session['id']} (steps "
            f"{_numbers(session)}).",
            suggested_action=f"Send the next number, {max(existing) + 1}, or revise step "
            f"{number} with a new step carrying isRevision=true and revisesStep={number}.",
        )
    if len(session["steps"]) >= MAX_STEPS:
        raise web_error(
            Kind.VALIDATION,
            f"research session {session['id']} has reached its limit of {MAX_STEPS} steps.",
            suggested_action="Export it with research_export, then start a new session "
            "with sequential_search step 1.",
        )
    for name in ("revisesStep", "branchFromStep"):
        target = step.get(name)
        if target is not None and target not in existing:
            raise web_error(
                Kind.VALIDATION,
                f"{name} {target} names no recorded step; this session has steps "
                f"{_numbers(session)}.",
            )
    session["steps"].append(step)
    if goal:
        session["researchGoal"] = goal
    elif not session["researchGoal"]:
        session["researchGoal"] = step["searchStep"]
    if "knowledgeGap" in step:
        session["gaps"].append({"gap": step["knowledgeGap"], "foundInStep": number})
    session["updatedAt"] = step["recordedAt"]
    if step["nextStepNeeded"]:
        session.pop("completedAt", None)
    else:
        session["completedAt"] = step["recordedAt"]
    return session


# -- sources --------------------------------------------------------------------------


def _clean_text(value: Any, limit: int) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())[:limit]
    return text or None


def _clean_doi(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        ref = parse_ref(value)
    except DoigetError:
        return None
    return ref.value if ref.kind == "doi" else None


def _clean_year(value: Any) -> int | None:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 1000 <= value <= 2999 else None


def _clean_source(source: Mapping[str, Any], tool: str, found_at: str) -> dict[str, Any] | None:
    """The stored form of one reported source, or None when it has no usable link."""
    doi = _clean_doi(source.get("doi"))
    url = _clean_text(source.get("url"), 2048)
    if url is None or not url.lower().startswith(("http://", "https://")):
        if doi is None:
            return None
        url = f"https://doi.org/{doi}"
    kind = source.get("kind")
    if kind not in _SOURCE_KINDS:
        kind = "paper" if doi else "web"
    authors = source.get("authors")
    names = (
        [name for item in authors[:100] if (name := _clean_text(item, 200))]
        if isinstance(authors, list)
        else []
    )
    clean: dict[str, Any] = {
        "url": url,
        "title": _clean_text(source.get("title"), 500) or url,
        "kind": kind,
        "tool": tool,
        "foundAt": found_at,
        "doi": doi,
        "authors": names,
        "year": _clean_year(source.get("year")),
        "journal": _clean_text(source.get("journal"), 300),
    }
    return {name: value for name, value in clean.items() if value not in (None, [])}


def _merge_sources(session: Session, found: list[dict[str, Any]]) -> None:
    """Add new sources; complete known ones (same DOI, else same URL and no other DOI)."""
    sources: list[dict[str, Any]] = session["sources"]
    by_doi = {source["doi"]: source for source in sources if source.get("doi")}
    by_url = {url_key(source["url"]): source for source in sources}
    for new in found:
        known = by_doi.get(new["doi"]) if new.get("doi") else None
        if known is None:
            same_url = by_url.get(url_key(new["url"]))
            if same_url is not None and not (
                same_url.get("doi") and new.get("doi") and same_url["doi"] != new["doi"]
            ):
                known = same_url
        if known is not None:
            for name, value in new.items():
                known.setdefault(name, value)
            if known["kind"] == "web" and new["kind"] != "web":
                known["kind"] = new["kind"]
            if known.get("doi"):
                by_doi[known["doi"]] = known
            continue
        if len(sources) >= MAX_SOURCES:
            session["sourcesDropped"] = session.get("sourcesDropped", 0) + 1
            continue
        sources.append(new)
        by_url[url_key(new["url"])] = new
        if new.get("doi"):
            by_doi[new["doi"]] = new
    session["updatedAt"] = found[0]["foundAt"]


# -- views ----------------------------------------------------------------------------


def _superseded(steps: Sequence[Mapping[str, Any]]) -> dict[int, int]:
    """Step number -> the latest step number that revises it."""
    latest: dict[int, int] = {}
    for step in steps:
        revised = step.get("revisesStep")
        if step.get("isRevision") and revised is not None:
            latest[revised] = max(latest.get(revised, 0), step["stepNumber"])
    return latest


def _steps(session: Session) -> list[dict[str, Any]]:
    """Every step in number order, copied, with ``supersededBy`` where revised."""
    ordered = sorted(session["steps"], key=lambda step: step["stepNumber"])
    superseded = _superseded(ordered)
    out = []
    for step in ordered:
        view = dict(step)
        if step["stepNumber"] in superseded:
            view["supersededBy"] = superseded[step["stepNumber"]]
        out.append(view)
    return out


def _branches(steps: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``[{branchId, fromStep?, steps}]`` for every named branch, in order of appearance."""
    branches: dict[str, dict[str, Any]] = {}
    for step in steps:
        name = step.get("branchId")
        if not name:
            continue
        branch = branches.setdefault(name, {"branchId": name, "steps": []})
        if "fromStep" not in branch and step.get("branchFromStep") is not None:
            branch["fromStep"] = step["branchFromStep"]
        branch["steps"].append(step["stepNumber"])
    return list(branches.values())


def _one_liner(step: Mapping[str, Any]) -> dict[str, Any]:
    text = " ".join(step["searchStep"].split())
    if len(text) > ONE_LINER_CHARS:
        text = text[: ONE_LINER_CHARS - 1] + "…"
    entry: dict[str, Any] = {
        "stepNumber": step["stepNumber"],
        "oneLiner": text,
        "branchId": step.get("branchId", "main"),
    }
    for name in ("confidence", "revisesStep", "supersededBy"):
        if name in step:
            entry[name] = step[name]
    return entry


def session_document(session: Session) -> dict[str, Any]:
    """The whole session as readers see it (and research_export's json document)."""
    steps = _steps(session)
    document: dict[str, Any] = {
        "sessionId": session["id"],
        "researchGoal": session["researchGoal"],
        "startedAt": session["startedAt"],
        "updatedAt": session["updatedAt"],
        "isComplete": bool(steps) and not steps[-1]["nextStepNeeded"],
        "steps": steps,
        "branches": _branches(steps),
        "gaps": list(session["gaps"]),
        "sources": list(session["sources"]),
    }
    if session.get("completedAt"):
        document["completedAt"] = session["completedAt"]
    if session.get("sourcesDropped"):
        document["sourcesDropped"] = session["sourcesDropped"]
    return document


def _sentence(text: str) -> str:
    """``text`` ended with a full stop unless it already ends a sentence (a goal or
    a step is often written as a question)."""
    return text if text.endswith((".", "?", "!", "…")) else text + "."


def _summary_text(document: Mapping[str, Any]) -> str:
    steps = document["steps"]
    parts = [_sentence(f"{counted(len(steps), 'step')} toward: {document['researchGoal']}")]
    if steps:
        latest = _one_liner(steps[-1])
        parts.append(_sentence(f"Latest (step {latest['stepNumber']}): {latest['oneLiner']}"))
    revised = [s for s in steps if "supersededBy" in s]
    if revised:
        pairs = ", ".join(f"{s['stepNumber']} (by {s['supersededBy']})" for s in revised)
        parts.append(f"Superseded steps: {pairs}.")
    if document["branches"]:
        names = ", ".join(b["branchId"] for b in document["branches"])
        parts.append(f"Branches: {names}.")
    parts.append(
        f"{counted(len(document['gaps']), 'knowledge gap')} noted; "
        f"{counted(len(document['sources']), 'source')} recorded."
    )
    return " ".join(parts)


def _base_view(document: Mapping[str, Any], mode: str) -> dict[str, Any]:
    view: dict[str, Any] = {
        "sessionId": document["sessionId"],
        "responseMode": mode,
        "researchGoal": document["researchGoal"],
        "isComplete": document["isComplete"],
        "startedAt": document["startedAt"],
        "updatedAt": document["updatedAt"],
        "stepCount": len(document["steps"]),
        "sourceCount": len(document["sources"]),
    }
    for name in ("completedAt", "sourcesDropped"):
        if name in document:
            view[name] = document[name]
    if document["branches"]:
        view["branches"] = document["branches"]
    return view


def _step_view(session: Session, current: int) -> dict[str, Any]:
    """sequential_search's answer: every step in full while few, else a summary."""
    document = session_document(session)
    steps = document["steps"]
    full = len(steps) <= FULL_MODE_MAX_STEPS
    view = _base_view(document, "full" if full else "summary")
    view["currentStep"] = current
    if full:
        view["steps"] = steps
    else:
        view["summary"] = _summary_text(document)
        view["stepIndex"] = [_one_liner(step) for step in steps]
        view["lastSteps"] = steps[-LAST_STEPS:]
    view["gaps"] = document["gaps"]
    view["sources"] = document["sources"][-RECENT_SOURCES:]
    if len(steps) >= STEP_WARNING_AT:
        view["warning"] = (
            f"{len(steps)} of {MAX_STEPS} steps used; export the session with "
            "research_export before it fills up."
        )
    view["expiresInSeconds"] = int(SESSION_TTL)
    view["trust"] = TRUST
    return view


def _summary_view(session: Session) -> dict[str, Any]:
    """get_research_session's recovery view: summary, index, last steps, everything else."""
    document = session_document(session)
    view = _base_view(document, "summary")
    view["summary"] = _summary_text(document)
    view["stepIndex"] = [_one_liner(step) for step in document["steps"]]
    view["lastSteps"] = document["steps"][-LAST_STEPS:]
    view["gaps"] = document["gaps"]
    view["sources"] = document["sources"]
    view["trust"] = TRUST
    return view
