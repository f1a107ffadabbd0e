"""What ``doiget_capability_profile`` and ``capabilities --json`` tell an agent.

The capability profile's own keys (the spec's) come first and stay as they are; beside
them, what an agent plans its calls with: the toolsets served, whether a contact email
is set, which scholar, web search and patent providers are configured and healthy,
whether the browser tier can run, the library's model and backend, whether
retraction notices are looked up, and which Zotero library is connected and whether
writes to it are off, asked or on. Booleans, names and states only: no setting's value
that could be a secret is ever read into it.
"""

from __future__ import annotations

from typing import Any

from doiget.installed import browser_state, servable
from doiget.runtime import Runtime
from doiget.upstreams import Role, Upstream, all_upstreams, by_preference
from doiget.zotero.status import zotero_state


def _provider(upstream: Upstream, runtime: Runtime) -> dict[str, bool]:
    from doiget.web.breaker import provider_healthy

    configured = all(runtime.settings.value(env) is not None for env in upstream.required)
    return {"configured": configured, "healthy": configured and provider_healthy(upstream.name)}


def capability_report(runtime: Runtime) -> dict[str, Any]:
    """The profile's redacted keys, then what an agent plans with (see the module)."""
    settings = runtime.settings
    served, _ = servable(settings.toolsets, settings)
    scholar = [u for u in all_upstreams() if u.role is Role.SCHOLARLY and "scholar" in u.toolsets]
    browser = browser_state(settings.browser)
    from doiget.library.projects import DEFAULT_EMBED_MODEL

    return {
        **runtime.profile.to_redacted_dict(),
        "toolsets": list(served),
        "email_set": bool(settings.email),
        "scholar_providers": {u.name: _provider(u, runtime) for u in scholar},
        "web_search_providers": {
            u.name: _provider(u, runtime) for u in by_preference(Role.WEB_SEARCH)
        },
        "patent_providers": {
            u.name: _provider(u, runtime) for u in by_preference(Role.PATENT_SEARCH)
        },
        "browser_tier": {"usable": browser.usable, "reason": browser.reason},
        "library": {
            "embed_model": str(settings.embed_model_path or DEFAULT_EMBED_MODEL),
            "backend": "qdrant" if settings.qdrant_url else "sqlite",
        },
        # academic_search and scrape_page attach Crossref's retraction notices.
        "retraction_checks": "web" in served,
        "zotero": zotero_state(settings),
    }
