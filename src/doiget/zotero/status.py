"""What ``doiget health`` and ``capabilities`` say of Zotero: whether a library is
configured and which (never its key), whether writes are off, ask or on, and (health
only, one cheap request) whether it answers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from doiget.errors import DoigetError

if TYPE_CHECKING:
    from doiget.config import Settings
    from doiget.runtime import Runtime

# How long health waits for Zotero to answer.
REACH_SECONDS: Final = 10.0


def zotero_state(settings: Settings) -> dict[str, Any]:
    """Configured?, which library, and the write mode; no request is sent."""
    zotero = settings.zotero
    if not zotero.configured:
        return {"configured": False, "writes": "off"}
    local = zotero.local_url
    library = f"the Zotero desktop app ({local})" if local else zotero.library
    return {"configured": True, "library": library, "writes": zotero.write}


async def zotero_health(runtime: Runtime) -> dict[str, Any]:
    """:func:`zotero_state`, and whether the library answers (its version) or why not."""
    import anyio

    from doiget.zotero.api import open_api

    state = zotero_state(runtime.settings)
    if not state["configured"]:
        return state
    try:
        api = open_api(runtime.settings, runtime.network())
        with anyio.fail_after(REACH_SECONDS):
            version = await api.library_version()
    except DoigetError as error:
        return {**state, "reachable": False, "reason": error.message}
    except TimeoutError:
        return {**state, "reachable": False, "reason": f"no answer in {REACH_SECONDS:g} s"}
    return {**state, "reachable": True, "library_version": version}
