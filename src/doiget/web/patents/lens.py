"""Lens.org patent API, keyed by LENS_API_TOKEN.

One JSON POST to ``/patent/search`` with the token as a bearer token and an
Elasticsearch-style query: text and party names go in ``bool.must`` (they rank),
classification, jurisdiction and the filing-date range in ``bool.filter``. Lens
searches claims and filing dates natively, so every filter of the tool is honoured
as asked. Lens reports its rate limit in ``x-rate-limit-retry-after-seconds``.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final

from doiget.net.redact import redact_text
from doiget.secret import Secret
from doiget.sources.shape import expect_dict, expect_list, items, mapping, parse_or_drift, text
from doiget.upstreams.lens_org import KEY_VAR, UPSTREAM
from doiget.web.failure import Kind, web_error
from doiget.web.patents.base import (
    PatentAnswer,
    PatentQuery,
    grant_date,
    iso_date,
)
from doiget.web.providers.base import attributed, error_body, plain
from doiget.web.results import PatentRecord

if TYPE_CHECKING:
    from doiget.config import Settings
    from doiget.net.client import Fetched, SourceClient
    from doiget.net.network import Network


NAME: Final = UPSTREAM.name
ENDPOINT: Final = "https://api.lens.org/patent/search"
PAGE: Final = "https://www.lens.org/lens/patent/"
# The text a prior-art or landscape search matches against.
TEXT_FIELDS: Final = ("title", "abstract", "claims")
INCLUDE: Final = (
    "lens_id",
    "jurisdiction",
    "doc_number",
    "kind",
    "date_published",
    "biblio.publication_reference",
    "biblio.application_reference",
    "biblio.invention_title",
    "biblio.parties.applicants",
    "biblio.parties.inventors",
    "abstract",
    "legal_status",
)
# A CPC main group without its subgroup: subclass letter followed by digits.
_MAIN_GROUP: Final = re.compile(r"[A-Z][0-9]{2}[A-Z][0-9]+")
# Longest piece of Lens's own error text repeated to the agent.
_DETAIL_CHARS: Final = 300


def _cpc_clause(code: str) -> dict[str, Any]:
    """A full group (``H01L21/02``) is one term; a class, subclass or main group
    (``G06F``, ``H01L21``) covers every symbol under it, which only a prefix match
    expresses (a main group's prefix ends at its slash, so H01L21 is not H01L210)."""
    if "/" in code:
        return {"term": {"class_cpc.symbol": code}}
    prefix = f"{code}\\/" if _MAIN_GROUP.fullmatch(code) else code
    return {"query_string": {"query": f"class_cpc.symbol:{prefix}*"}}


def request_body(query: PatentQuery) -> dict[str, Any]:
    """The ``/patent/search`` body for ``query``."""
    must: list[dict[str, Any]] = []
    filters: list[dict[str, Any]] = []
    if query.number:
        must.append({"term": {"ids": query.number}})
    elif query.text and query.search_type == "specific":
        must.append({"match_phrase": {"title": query.text}})
    elif query.text:
        must.append({"bool": {"should": [{"match": {name: query.text}} for name in TEXT_FIELDS]}})
    if query.assignee:
        must.append({"match_phrase": {"applicant.name": query.assignee}})
    if query.inventor:
        must.append({"match_phrase": {"inventor.name": query.inventor}})
    if query.cpc:
        filters.append(_cpc_clause(query.cpc))
    if query.office:
        filters.append({"term": {"jurisdiction": query.office}})
    if query.year_from is not None or query.year_to is not None:
        span: dict[str, str] = {}
        if query.year_from is not None:
            span["gte"] = f"{query.year_from:04d}-01-01"
        if query.year_to is not None:
            span["lte"] = f"{query.year_to:04d}-12-31"
        filters.append({"range": {"application_reference.date": span}})
    boolean: dict[str, Any] = {}
    if must:
        boolean["must"] = must
    if filters:
        boolean["filter"] = filters
    return {"query": {"bool": boolean}, "size": query.size, "include": list(INCLUDE)}


def _localised(value: Any) -> str | None:
    """The English text of a ``[{text, lang}]`` list, else its first text."""
    entries = [entry for entry in items(value) if plain(entry.get("text"))]
    english = [entry for entry in entries if str(entry.get("lang", "")).lower() == "en"]
    chosen = (english or entries)[:1]
    return plain(chosen[0].get("text")) if chosen else None


def _first_party(parties: Any) -> str | None:
    """The name of the first-listed party (lowest ``sequence`` when Lens gives one)."""
    named = [
        (party.get("sequence") if isinstance(party.get("sequence"), int) else 10**6, index, name)
        for index, party in enumerate(items(parties))
        if (name := text(mapping(party.get("extracted_name")).get("value")))
    ]
    return min(named)[2] if named else None


def _patent(row: dict[str, Any]) -> PatentRecord | None:
    lens_id = text(row.get("lens_id"))
    if lens_id is None:
        return None
    biblio = mapping(row.get("biblio"))
    published_ref = mapping(biblio.get("publication_reference"))
    office = text(row.get("jurisdiction")) or text(published_ref.get("jurisdiction"))
    doc_number = text(row.get("doc_number")) or text(published_ref.get("doc_number"))
    kind = text(row.get("kind")) or text(published_ref.get("kind"))
    number = f"{office}{doc_number}{kind or ''}" if office and doc_number else lens_id
    parties = mapping(biblio.get("parties"))
    legal = mapping(row.get("legal_status"))
    published = iso_date(row.get("date_published") or published_ref.get("date"))
    status = text(legal.get("patent_status"))
    return PatentRecord(
        title=_localised(biblio.get("invention_title")) or number,
        number=number,
        url=PAGE + lens_id,
        abstract=_localised(row.get("abstract")),
        assignee=_first_party(parties.get("applicants")),
        inventor=_first_party(parties.get("inventors")),
        filed=iso_date(mapping(biblio.get("application_reference")).get("date")),
        granted=iso_date(legal.get("grant_date")) or grant_date(kind, published),
        status=status.replace("_", " ").capitalize() if status else None,
    )


def parse(data: Any) -> tuple[PatentRecord, ...]:
    """The patents of a ``/patent/search`` answer (records without a Lens ID skipped)."""
    document = expect_dict(data, "a search answer")
    rows = expect_list(document.get("data", []), "a data list")
    return tuple(patent for row in items(rows) if (patent := _patent(row)) is not None)


def _detail(fetched: Fetched, token: str) -> str:
    """Lens's explanation of a refusal, shortened, the token scrubbed should it be echoed."""
    body = error_body(fetched)
    found = next(
        (found for key in ("message", "error", "detail") if (found := text(body.get(key)))),
        None,
    )
    return redact_text(found or "no explanation given", [token])[:_DETAIL_CHARS]


def _retry_after(fetched: Fetched) -> float | None:
    for header in ("x-rate-limit-retry-after-seconds", "retry-after"):
        value = str(fetched.headers.get(header, "")).strip()
        if value.isdigit():
            return float(value)
    return None


class LensOrgClient:
    """Searches the Lens.org patent index."""

    name = NAME

    def __init__(self, client: SourceClient, token: Secret) -> None:
        self._client = client
        self._token = token

    async def search(self, query: PatentQuery) -> PatentAnswer:
        """One POST to ``/patent/search``."""
        headers = {
            "Accept": "application/json",
            "Content-Type": "application/json",
            "Authorization": f"Bearer {self._token.reveal()}",
        }
        with attributed(NAME, key_vars=KEY_VAR):
            fetched = await self._client.post(
                ENDPOINT,
                json.dumps(request_body(query)).encode("utf-8"),
                headers=headers,
                accept_status=(400, 429),
            )
            if fetched.status == 429:
                wait = _retry_after(fetched)
                raise web_error(
                    Kind.RATE_LIMIT,
                    "lens is rate limiting patent searches (HTTP 429)"
                    + (f"; try again in {wait:.0f} s." if wait is not None else "."),
                    provider=NAME,
                    retry_after=wait,
                )
            if fetched.status == 400:
                raise web_error(
                    Kind.VALIDATION,
                    f"lens refused the search (HTTP 400): {_detail(fetched, self._token.reveal())}",
                    provider=NAME,
                )
            data = self._client.json_of(fetched)
            patents = parse_or_drift(self._client, parse, data)
        return PatentAnswer(provider=NAME, patents=patents[: query.size])


def build(settings: Settings, network: Network) -> LensOrgClient:
    """The Lens.org client with its token."""
    token = settings.secret(KEY_VAR)
    assert token is not None
    return LensOrgClient(network.client(NAME), token)
