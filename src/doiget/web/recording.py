"""Recording what a tool found into the research session it was called with.

The one path the web and scholar tools share. A tool called with a ``sessionId``
checks the session before any work (:meth:`Research.require`), answers, then adds
its sources here. The answer is the caller's either way: a session that expired
meanwhile, or a store that failed, comes back as a warning (logged, and shown to the
caller where the face has a place for it), never as a lost result.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from doiget.errors import DoigetError

if TYPE_CHECKING:
    from doiget.web.research import Research

logger = logging.getLogger("doiget.web.sessions")


async def record_found(
    research: Research, session_id: str, tool: str, sources: Sequence[Mapping[str, Any]]
) -> str | None:
    """Add ``sources`` that ``tool`` found to the session; the warning when they were not.

    ``sources`` are in the shape :meth:`Research.record_sources` takes.
    """
    try:
        await research.record_sources(session_id, tool, sources)
    except DoigetError as error:
        logger.warning("%s results not recorded in session %s: %s", tool, session_id, error.message)
        return error.message
    return None
