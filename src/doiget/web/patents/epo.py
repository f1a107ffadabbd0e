"""EPO Open Patent Services (OPS 3.2), keyed by EPO_OPS_KEY and EPO_OPS_SECRET.

OPS wants an OAuth access token (client-credentials grant, about 20 minutes long),
then a CQL query to ``published-data/search/biblio`` with the wanted slice in a
``Range`` header; it answers ST.36 exchange-document XML. CQL reaches only the
bibliographic data, so two filters cannot be honoured exactly and say so in the
notes: text is matched in title and abstract (not claims), and years apply to the
publication date (OPS has no filing-date index). "No results" is an HTTP 404.
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from doiget.errors import DoigetError
from doiget.net.redact import redact_text
from doiget.secret import Secret
from doiget.sources.shape import ShapeError, expect_dict, integer, parse_or_drift, text
from doiget.sources.xmldoc import inner_text, parse_xml
from doiget.upstreams.epo import KEY_VAR, SECRET_VAR, UPSTREAM
from doiget.web.failure import Kind, web_error
from doiget.web.patents.base import PatentAnswer, PatentQuery, grant_date, iso_date
from doiget.web.providers.base import attributed, error_body
from doiget.web.results import PatentRecord

if TYPE_CHECKING:
    from lxml import etree

    from doiget.config import Settings
    from doiget.net.client import Fetched, SourceClient
    from doiget.net.network import Network


NAME: Final = UPSTREAM.name
TOKEN_URL: Final = "https://ops.epo.org/3.2/auth/accesstoken"  # noqa: S105  # a URL
SEARCH_URL: Final = "https://ops.epo.org/3.2/rest-services/published-data/search/biblio"
KEY_VARS: Final = f"{KEY_VAR} and {SECRET_VAR}"
PAGE: Final = "https://worldwide.espacenet.com/patent/search?q=pn%3D"
# OPS serves at most 100 records per search request.
MAX_RANGE: Final = 100
# A token is renewed this many seconds before OPS says it expires.
_TOKEN_MARGIN_S: Final = 60.0
_NS: Final = {"ops": "http://ops.epo.org", "ex": "http://www.epo.org/exchange"}
# Which rendering of a party name to prefer: as filed, then EPO's normalised forms.
_NAME_FORMATS: Final = ("original", "docdb", "epodoc")
_APPLICANTS: Final = "ex:parties/ex:applicants/ex:applicant"
_INVENTORS: Final = "ex:parties/ex:inventors/ex:inventor"
_COUNTRY_SUFFIX: Final = re.compile(r"\s*\[[A-Z]{2}\]\s*$")
_CQL_UNSAFE: Final = re.compile(r'["\\=<>()]')
_DETAIL_CHARS: Final = 300

NOTE_NO_CLAIMS: Final = (
    "epo matches query text in titles and abstracts only; OPS cannot search claims"
)
NOTE_PUBLICATION_YEARS: Final = (
    "epo applied year_from/year_to to the publication date; OPS cannot search by filing date"
)


def _cql_value(value: str) -> str:
    """``value`` as a quoted CQL term (characters CQL would read as syntax removed)."""
    return '"' + " ".join(_CQL_UNSAFE.sub(" ", value).split()) + '"'


def cql(query: PatentQuery) -> tuple[str, tuple[str, ...]]:
    """The CQL for ``query`` and the notes on what it could not express."""
    parts: list[str] = []
    notes: list[str] = []
    if query.number:
        parts.append(f"pn={query.number}")
    elif query.text and query.search_type == "specific":
        parts.append(f"ti={_cql_value(query.text)}")
    elif query.text:
        parts.append(f"ta all {_cql_value(query.text)}")
        notes.append(NOTE_NO_CLAIMS)
    if query.assignee:
        parts.append(f"pa={_cql_value(query.assignee)}")
    if query.inventor:
        parts.append(f"in={_cql_value(query.inventor)}")
    if query.cpc:
        parts.append(f"cpc={_cql_value(query.cpc)}")
    if query.office:
        parts.append(f"pn={query.office}")
    if query.year_from is not None and query.year_to is not None:
        parts.append(f'pd within "{query.year_from} {query.year_to}"')
    elif query.year_from is not None:
        parts.append(f"pd>={query.year_from}")
    elif query.year_to is not None:
        parts.append(f"pd<={query.year_to}")
    if query.year_from is not None or query.year_to is not None:
        notes.append(NOTE_PUBLICATION_YEARS)
    return " AND ".join(parts), tuple(notes)


def _localised(nodes: list[etree._Element]) -> str | None:
    """The English text among ``nodes`` (``lang`` attributes), else the first text."""
    found = [(node.get("lang", "").lower(), inner_text(node)) for node in nodes]
    found = [(lang, value) for lang, value in found if value]
    english = [value for lang, value in found if lang == "en"]
    return english[0] if english else (found[0][1] if found else None)


def _first_party(parties: list[etree._Element], name_path: str) -> str | None:
    """The first-listed party's name, as filed when OPS gives that rendering."""
    for data_format in _NAME_FORMATS:
        named = [
            (integer(party.get("sequence")) or 10**6, index, name)
            for index, party in enumerate(parties)
            if party.get("data-format", "docdb") == data_format
            and (name := inner_text(party.find(name_path, _NS)))
        ]
        if named:
            return _COUNTRY_SUFFIX.sub("", min(named)[2]).rstrip(" ,") or None
    return None


def _date_of(node: etree._Element | None) -> str | None:
    if node is None:
        return None
    for date in node.iterfind(".//ex:document-id/ex:date", _NS):
        found = iso_date(date.text)
        if found:
            return found
    return None


def _patent(document: etree._Element) -> PatentRecord | None:
    office, doc_number = document.get("country"), document.get("doc-number")
    if not office or not doc_number or document.get("status") == "not found":
        return None
    kind = document.get("kind") or ""
    number = f"{office}{doc_number}{kind}"
    biblio = document.find("ex:bibliographic-data", _NS)
    if biblio is None:
        biblio = document
    published = _date_of(biblio.find("ex:publication-reference", _NS))
    abstracts = document.findall("ex:abstract", _NS) + biblio.findall("ex:abstract", _NS)
    return PatentRecord(
        title=_localised(biblio.findall("ex:invention-title", _NS)) or number,
        number=number,
        url=PAGE + number,
        abstract=_localised(abstracts),
        assignee=_first_party(biblio.findall(_APPLICANTS, _NS), "ex:applicant-name/ex:name"),
        inventor=_first_party(biblio.findall(_INVENTORS, _NS), "ex:inventor-name/ex:name"),
        filed=_date_of(biblio.find("ex:application-reference", _NS)),
        granted=grant_date(kind, published),
    )


def parse(body: bytes) -> tuple[PatentRecord, ...]:
    """The patents of a ``search/biblio`` answer."""
    root = parse_xml(body, "a search answer")
    if root.tag != f"{{{_NS['ops']}}}world-patent-data":
        raise ShapeError("returned XML that is not an OPS world-patent-data document")
    if root.find("ops:biblio-search", _NS) is None:
        raise ShapeError("returned a document without a biblio-search result")
    documents = root.iterfind(".//ex:exchange-document", _NS)
    return tuple(patent for node in documents if (patent := _patent(node)) is not None)


def _fault(fetched: Fetched, secrets: list[str]) -> str:
    """OPS's own explanation from a ``<fault>`` body (or a JSON one), shortened and
    with the credentials scrubbed should OPS ever echo them."""
    message: str | None = None
    try:
        root = parse_xml(fetched.content, "an error")
        node = root.find("ops:message", _NS)
        message = inner_text(node) if node is not None else inner_text(root)
    except ShapeError:
        body = error_body(fetched)
        message = text(body.get("error_description")) or text(body.get("error"))
    return redact_text(message or "no explanation given", secrets)[:_DETAIL_CHARS]


def _token_of(data: Any) -> tuple[str, float]:
    document = expect_dict(data, "a token answer")
    token = text(document.get("access_token"))
    if token is None:
        raise ShapeError("returned a token answer without access_token")
    return token, float(integer(document.get("expires_in")) or 1200)


class Epo:
    """Searches EPO's worldwide bibliographic data through OPS."""

    name = NAME

    def __init__(
        self,
        client: SourceClient,
        key: Secret,
        secret: Secret,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._key = key
        self._secret = secret
        self._clock = clock
        self._token: tuple[str, float] | None = None

    async def search(self, query: PatentQuery) -> PatentAnswer:
        """One CQL search (after a token request when none is held or it expired)."""
        expression, notes = cql(query)
        size = min(query.size, MAX_RANGE)
        with attributed(NAME, key_vars=KEY_VARS):
            fetched = await self._search(expression, size)
            if fetched is None:
                # A stale token: OPS ends a token early now and then; get one more.
                self._token = None
                fetched = await self._search(expression, size)
            if fetched is None:
                raise web_error(
                    Kind.NOT_CONFIGURED,
                    f"epo refused a fresh access token (HTTP 401); check {KEY_VARS}.",
                    provider=NAME,
                )
            if fetched.status == 404:
                return PatentAnswer(provider=NAME, patents=(), notes=notes)
            patents = parse_or_drift(self._client, parse, fetched.content)
        return PatentAnswer(provider=NAME, patents=patents[:size], notes=notes)

    async def _search(self, expression: str, size: int) -> Fetched | None:
        """The answer to one search; ``None`` when OPS refused the token (HTTP 401)."""
        headers = {
            "Authorization": f"Bearer {await self._access_token()}",
            "Accept": "application/xml",
            "Range": f"1-{size}",
        }
        fetched = await self._client.get(
            SEARCH_URL,
            params={"q": expression},
            headers=headers,
            accept_status=(400, 401, 403, 404, 429),
        )
        if fetched.status == 401:
            return None
        if fetched.status in (403, 429):
            raise self._refusal(fetched)
        if fetched.status == 400:
            raise web_error(
                Kind.VALIDATION,
                f"epo refused the search (HTTP 400): {self._fault(fetched)}. "
                f"CQL sent: {expression}",
                provider=NAME,
            )
        return fetched

    def _refusal(self, fetched: Fetched) -> DoigetError:
        """A 403 is a used-up quota when OPS names a rejection reason, else a refused
        key; a 429 is throttling."""
        reason = str(fetched.headers.get("x-rejection-reason", "")).strip()
        wait = str(fetched.headers.get("retry-after", "")).strip()
        retry_after = float(wait) if wait.isdigit() else None
        if fetched.status == 429 or reason:
            return web_error(
                Kind.RATE_LIMIT,
                f"epo is throttling requests (HTTP {fetched.status}"
                + (f", {reason}" if reason else "")
                + f"): {self._fault(fetched)}",
                provider=NAME,
                retry_after=retry_after,
            )
        return web_error(
            Kind.NOT_CONFIGURED,
            f"epo refused access (HTTP 403): {self._fault(fetched)}; check {KEY_VARS}.",
            provider=NAME,
        )

    def _fault(self, fetched: Fetched) -> str:
        return _fault(fetched, [self._key.reveal(), self._secret.reveal()])

    async def _access_token(self) -> str:
        now = self._clock()
        if self._token is not None and self._token[1] > now:
            return self._token[0]
        pair = f"{self._key.reveal()}:{self._secret.reveal()}".encode()
        headers = {
            "Authorization": "Basic " + base64.b64encode(pair).decode("ascii"),
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        }
        fetched = await self._client.post(
            TOKEN_URL, b"grant_type=client_credentials", headers=headers, accept_status=(400,)
        )
        if fetched.status == 400:
            raise web_error(
                Kind.NOT_CONFIGURED,
                f"epo refused the credentials (HTTP 400: {self._fault(fetched)}); "
                f"check {KEY_VARS}.",
                provider=NAME,
            )
        token, lifetime = parse_or_drift(self._client, _token_of, self._client.json_of(fetched))
        self._token = (token, now + max(lifetime - _TOKEN_MARGIN_S, 1.0))
        return token


def build(settings: Settings, network: Network) -> Epo:
    """The OPS client with its consumer key and secret."""
    key, secret = settings.secret(KEY_VAR), settings.secret(SECRET_VAR)
    assert key is not None and secret is not None
    return Epo(network.client(NAME), key, secret)
