"""patent_search against the replay upstream: Lens.org and EPO OPS.

No recorded Lens or OPS answers exist in the shared fixtures, so the answers served
here are hand-made in each API's documented shape: ``web/lens-patent-search.json``
(Lens ``/patent/search``), ``web/epo-ops-search-biblio.xml`` (OPS ``search/biblio``,
ST.36 exchange documents) and the small inline bodies below (see MANIFEST.md).
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from doiget.config import load_settings
from doiget.contract import parse
from doiget.errors import DoigetError
from doiget.net.network import Network
from doiget.server.schema import input_schema
from doiget.web.failure import Kind, failure_of
from doiget.web.patents import Patents
from doiget.web.requests import PatentSearchRequest
from doiget.web.search import EPISTEMIC_WARNING

from netutil import make_network
from replay import ReplayUpstream, Reply

LENS = ("api.lens.org", "/patent/search")
EPO_TOKEN = ("ops.epo.org", "/3.2/auth/accesstoken")
EPO_SEARCH = ("ops.epo.org", "/3.2/rest-services/published-data/search/biblio")
LENS_TOKEN = "lens-token-7f3a9c"
EPO_KEY = "epo-key-51d0"
EPO_SECRET = "epo-secret-c2e8"
LENS_FIXTURE = "web/lens-patent-search.json"
EPO_FIXTURE = "web/epo-ops-search-biblio.xml"
# OPS's answer to a search that matches nothing (hand-made in its fault shape).
EPO_NO_RESULTS = (
    b'<?xml version="1.0" encoding="UTF-8"?>'
    b'<fault xmlns="http://ops.epo.org"><code>SERVER.EntityNotFound</code>'
    b"<message>No results found</message></fault>"
)
EMPTY_LENS = {"total": 0, "data": [], "results": 0}


class Searcher:
    """Patents driven as the tool drives it: arguments read through the contract."""

    def __init__(self, patents: Patents) -> None:
        self.patents = patents

    async def search(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.patents.search(parse(PatentSearchRequest, arguments))


Make = Callable[..., Searcher]


@pytest.fixture
async def make(doiget_env: dict[str, str]) -> AsyncIterator[Make]:
    """Builds a Patents over the replay upstream with the given extra variables."""
    networks: list[Network] = []

    def build(**extra: str) -> Searcher:
        env = {**doiget_env, **extra}
        network = make_network(env)
        networks.append(network)
        return Searcher(Patents(load_settings(env), network))

    yield build
    for network in networks:
        await network.aclose()


def lens_only(make: Make) -> Searcher:
    return make(LENS_API_TOKEN=LENS_TOKEN)


def epo_only(make: Make) -> Searcher:
    return make(EPO_OPS_KEY=EPO_KEY, EPO_OPS_SECRET=EPO_SECRET)


def serve_epo_token(upstream: ReplayUpstream) -> None:
    upstream.json(
        *EPO_TOKEN,
        {"access_token": "ops-access-1", "token_type": "BearerToken", "expires_in": "1199"},
    )


def sent_body(upstream: ReplayUpstream) -> Any:
    (request,) = upstream.requests_to(LENS[0])
    return json.loads(request.body)


async def fails(call: Awaitable[Any]) -> DoigetError:
    with pytest.raises(DoigetError) as caught:
        await call
    return caught.value


# -- configuration and validation ----------------------------------------------------


async def test_no_provider_configured_names_every_variable(
    make: Make, upstream: ReplayUpstream
) -> None:
    error = await fails(make().search({"query": "tactile robotic hand"}))
    failure = failure_of(error)
    assert failure.kind is Kind.NOT_CONFIGURED
    for var in ("LENS_API_TOKEN", "EPO_OPS_KEY", "EPO_OPS_SECRET"):
        assert var in failure.message
    assert failure.message.startswith("patent_search needs a patent provider: configure one of")
    assert upstream.requests == []


async def test_half_configured_epo_says_which_half_is_missing(make: Make) -> None:
    error = await fails(make(EPO_OPS_KEY=EPO_KEY).search({"query": "gripper"}))
    assert failure_of(error).kind is Kind.NOT_CONFIGURED
    assert "EPO_OPS_KEY is set but EPO_OPS_SECRET is missing" in error.message
    assert EPO_KEY not in error.message


async def test_pinned_provider_without_its_key_is_not_configured(make: Make) -> None:
    error = await fails(lens_only(make).search({"query": "gripper", "provider": "epo"}))
    failure = failure_of(error)
    assert failure.kind is Kind.NOT_CONFIGURED and failure.provider == "epo"
    assert "EPO_OPS_KEY" in failure.message and "EPO_OPS_SECRET" in failure.message


async def test_unknown_provider_lists_the_providers(make: Make) -> None:
    error = await fails(lens_only(make).search({"query": "gripper", "provider": "uspto"}))
    assert failure_of(error).kind is Kind.VALIDATION
    assert "lens, epo" in error.message


async def test_query_missing_without_assignee_or_inventor_is_refused(
    make: Make, upstream: ReplayUpstream
) -> None:
    patents = lens_only(make)
    for args in ({}, {"query": "   "}, {"cpc_code": "G06F", "year_from": 2015}):
        error = await fails(patents.search(args))
        assert failure_of(error).kind is Kind.VALIDATION
        assert "assignee or inventor" in error.message
    assert upstream.requests == []


async def test_years_out_of_order_are_refused(make: Make, upstream: ReplayUpstream) -> None:
    error = await fails(
        lens_only(make).search({"query": "gripper", "year_from": 2020, "year_to": 2015})
    )
    assert failure_of(error).kind is Kind.VALIDATION
    assert upstream.requests == []


def test_input_schema_is_valid_and_cpc_codes_are_checked() -> None:
    schema = input_schema(PatentSearchRequest)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    for code in ("G06F", "H01L21/02", "g06f 3/0484", "A61K"):
        assert validator.is_valid({"cpc_code": code}), code
    for code in ("banana", "G06F21/", "Z99X"):
        assert not validator.is_valid({"cpc_code": code}), code


# -- Lens -----------------------------------------------------------------------------


async def test_every_filter_reaches_lens(make: Make, upstream: ReplayUpstream) -> None:
    upstream.fixture(*LENS, LENS_FIXTURE)
    await lens_only(make).search(
        {
            "query": "tactile robotic hand",
            "num_results": 3,
            "patent_office": "US",
            "assignee": "Acme Robotics, Inc.",
            "inventor": "Road Runner",
            "cpc_code": "b25j 15/00",
            "year_from": 2015,
            "year_to": 2020,
        }
    )
    (request,) = upstream.requests_to(LENS[0])
    assert request.method == "POST"
    assert request.headers["authorization"] == f"Bearer {LENS_TOKEN}"
    assert json.loads(request.body) == {
        "query": {
            "bool": {
                "must": [
                    {
                        "bool": {
                            "should": [
                                {"match": {"title": "tactile robotic hand"}},
                                {"match": {"abstract": "tactile robotic hand"}},
                                {"match": {"claims": "tactile robotic hand"}},
                            ]
                        }
                    },
                    {"match_phrase": {"applicant.name": "Acme Robotics"}},
                    {"match_phrase": {"inventor.name": "Road Runner"}},
                ],
                "filter": [
                    {"term": {"class_cpc.symbol": "B25J15/00"}},
                    {"term": {"jurisdiction": "US"}},
                    {
                        "range": {
                            "application_reference.date": {
                                "gte": "2015-01-01",
                                "lte": "2020-12-31",
                            }
                        }
                    },
                ],
            }
        },
        "size": 3,
        "include": [
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
        ],
    }


async def test_search_by_inventor_alone_with_one_year_bound(
    make: Make, upstream: ReplayUpstream
) -> None:
    upstream.json(*LENS, EMPTY_LENS)
    body = await lens_only(make).search(
        {"inventor": "Wile E. Coyote", "year_to": 2019, "cpc_code": "G06F"}
    )
    assert sent_body(upstream)["query"] == {
        "bool": {
            "must": [{"match_phrase": {"inventor.name": "Wile E. Coyote"}}],
            "filter": [
                {"query_string": {"query": "class_cpc.symbol:G06F*"}},
                {"range": {"application_reference.date": {"lte": "2019-12-31"}}},
            ],
        }
    }
    assert body["query"] == "" and body["resultCount"] == 0
    await lens_only(make).search({"assignee": "Acme", "cpc_code": "H01L21"})
    last = json.loads(upstream.requests_to(LENS[0])[-1].body)["query"]["bool"]
    assert last["filter"] == [{"query_string": {"query": "class_cpc.symbol:H01L21\\/*"}}]


async def test_specific_number_is_looked_up_by_identifier(
    make: Make, upstream: ReplayUpstream
) -> None:
    upstream.json(*LENS, EMPTY_LENS)
    await lens_only(make).search({"query": "US 11,034,026 B2", "search_type": "specific"})
    assert sent_body(upstream)["query"] == {"bool": {"must": [{"term": {"ids": "US11034026B2"}}]}}


async def test_specific_title_is_an_exact_phrase(make: Make, upstream: ReplayUpstream) -> None:
    upstream.json(*LENS, EMPTY_LENS)
    await lens_only(make).search(
        {"query": "Robotic hand with tactile sensor array", "search_type": "specific"}
    )
    assert sent_body(upstream)["query"] == {
        "bool": {"must": [{"match_phrase": {"title": "Robotic hand with tactile sensor array"}}]}
    }


async def test_lens_results_are_parsed_into_the_output_shape(
    make: Make, upstream: ReplayUpstream
) -> None:
    upstream.fixture(*LENS, LENS_FIXTURE)
    body = await lens_only(make).search({"query": "tactile robotic hand", "num_results": 10})
    assert body["source"] == "lens"
    assert body["searchType"] == "prior_art"
    assert body["query"] == "tactile robotic hand"
    assert body["trust"] == "untrusted-external-content"
    assert "hints" not in body and "assigneeClusters" not in body and "notes" not in body
    # The record without a Lens ID is skipped: there is no page to link to.
    assert body["resultCount"] == 6 == len(body["patents"])
    assert [patent["number"] for patent in body["patents"]] == [
        "WO2021154211A1",
        "US11034026B2",
        "EP3814077A1",
        "US10875176B1",
        "CN112589836A",
        "JP2021084176A",
    ]
    assert body["patents"][1] == {
        "title": "Robotic hand with tactile sensor array",
        "number": "US11034026B2",
        "url": "https://www.lens.org/lens/patent/118-263-790-417-605",
        "abstract": "A robotic hand carries an array of tactile sensors & a controller.",
        "assignee": "Acme Robotics, Inc.",
        "inventor": "RUNNER ROAD",
        "filed": "2019-06-25",
        "granted": "2021-06-15",
        "status": "Active",
    }
    # A B1 without a grant date in legal_status: its publication is the grant.
    assert body["patents"][3]["granted"] == "2020-12-29"
    assert body["patents"][4]["title"] == "Robot hand with touch sensors"
    sparse = body["patents"][5]
    assert sparse == {
        "title": "Tactile sensor for robot fingers",
        "number": "JP2021084176A",
        "url": "https://www.lens.org/lens/patent/093-334-118-520-26X",
    }


async def test_num_results_caps_the_patents(make: Make, upstream: ReplayUpstream) -> None:
    upstream.fixture(*LENS, LENS_FIXTURE)
    body = await lens_only(make).search({"query": "tactile robotic hand", "num_results": 2})
    assert body["resultCount"] == 2
    assert sent_body(upstream)["size"] == 2


async def test_landscape_clusters_a_wider_pool_by_assignee(
    make: Make, upstream: ReplayUpstream
) -> None:
    upstream.fixture(*LENS, LENS_FIXTURE)
    body = await lens_only(make).search(
        {"query": "tactile robotic hand", "search_type": "landscape", "num_results": 4}
    )
    assert sent_body(upstream)["size"] == 50
    assert body["searchType"] == "landscape"
    # Acme (three filings, under three spellings) outranks Globex (two), and each
    # cluster's patents stay together; the cut at four leaves one Globex patent.
    assert [patent["number"] for patent in body["patents"]] == [
        "US11034026B2",
        "EP3814077A1",
        "CN112589836A",
        "WO2021154211A1",
    ]
    assert body["assigneeClusters"] == [
        {"assignee": "Acme Robotics, Inc.", "count": 3},
        {"assignee": "GLOBEX CORPORATION", "count": 1},
    ]


async def test_landscape_keeps_unassigned_patents_after_the_clusters(
    make: Make, upstream: ReplayUpstream
) -> None:
    upstream.fixture(*LENS, LENS_FIXTURE)
    body = await lens_only(make).search(
        {"query": "tactile robotic hand", "search_type": "landscape", "num_results": 10}
    )
    assert [patent["number"] for patent in body["patents"]][-1] == "JP2021084176A"
    assert body["assigneeClusters"] == [
        {"assignee": "Acme Robotics, Inc.", "count": 3},
        {"assignee": "GLOBEX CORPORATION", "count": 2},
    ]


async def test_zero_results_carry_hints(make: Make, upstream: ReplayUpstream) -> None:
    upstream.json(*LENS, EMPTY_LENS)
    patents = make(LENS_API_TOKEN=LENS_TOKEN, EPO_OPS_KEY=EPO_KEY, EPO_OPS_SECRET=EPO_SECRET)
    body = await patents.search(
        {
            "query": "zzqx flux capacitor",
            "assignee": "Acme",
            "year_from": 2015,
            "patent_office": "KR",
            "provider": "lens",
        }
    )
    assert body["patents"] == [] and body["resultCount"] == 0
    assert "assigneeClusters" not in body
    assert body["hints"] == {
        "reason": "filters_too_restrictive",
        "filtersApplied": ["assignee", "year_from", "patent_office"],
        "suggestedActions": [
            "remove the assignee filter",
            "remove the year_from filter",
            "remove the patent_office filter",
            "try provider=epo",
            "rephrase the query with fewer or more general terms",
        ],
        "epistemicWarning": EPISTEMIC_WARNING,
    }
    assert body["trust"] == "untrusted-external-content"


async def test_zero_results_without_filters_is_no_match(
    make: Make, upstream: ReplayUpstream
) -> None:
    upstream.json(*LENS, EMPTY_LENS)
    body = await lens_only(make).search({"query": "zzqx", "patent_office": "all"})
    assert body["hints"]["reason"] == "no_match"
    assert body["hints"]["filtersApplied"] == []


async def test_rejected_token_is_not_configured_and_never_shown(
    make: Make, upstream: ReplayUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    upstream.json(*LENS, {"message": f"Invalid token {LENS_TOKEN}"}, status=401)
    error = await fails(lens_only(make).search({"query": "gripper"}))
    failure = failure_of(error)
    assert failure.kind is Kind.NOT_CONFIGURED
    assert failure.provider == "lens"
    assert "LENS_API_TOKEN" in failure.message
    assert LENS_TOKEN not in json.dumps(failure.to_dict())
    assert LENS_TOKEN not in repr(error.details) and LENS_TOKEN not in caplog.text


async def test_lens_400_is_explained_without_the_token(
    make: Make, upstream: ReplayUpstream
) -> None:
    upstream.json(*LENS, {"message": f"Unsupported field for token {LENS_TOKEN}"}, status=400)
    error = await fails(lens_only(make).search({"query": "gripper"}))
    assert failure_of(error).kind is Kind.VALIDATION
    assert "Unsupported field" in error.message and LENS_TOKEN not in error.message


async def test_rate_limit_names_the_provider_and_the_wait(
    make: Make, upstream: ReplayUpstream
) -> None:
    upstream.json(
        *LENS,
        {"message": "Too many requests"},
        status=429,
        headers={"x-rate-limit-retry-after-seconds": "42"},
    )
    error = await fails(lens_only(make).search({"query": "gripper"}))
    failure = failure_of(error)
    assert failure.kind is Kind.RATE_LIMIT and failure.provider == "lens"
    assert error.retry_after == 42.0
    assert len(upstream.requests_to(LENS[0])) == 1  # not hammered with retries


# -- EPO OPS --------------------------------------------------------------------------


async def test_epo_gets_a_token_then_searches_with_cql(
    make: Make, upstream: ReplayUpstream
) -> None:
    serve_epo_token(upstream)
    upstream.fixture(*EPO_SEARCH, EPO_FIXTURE)
    body = await epo_only(make).search(
        {
            "query": 'tactile "robotic" hand',
            "num_results": 2,
            "assignee": "Acme Robotics Inc.",
            "inventor": "Road Runner",
            "cpc_code": "B25J15/00",
            "patent_office": "EP",
            "year_from": 2015,
            "year_to": 2020,
        }
    )
    token_request, search_request = upstream.requests_to("ops.epo.org")
    assert token_request.method == "POST" and token_request.path == EPO_TOKEN[1]
    assert token_request.body == b"grant_type=client_credentials"
    basic = base64.b64encode(f"{EPO_KEY}:{EPO_SECRET}".encode()).decode()
    assert token_request.headers["authorization"] == f"Basic {basic}"
    assert search_request.headers["authorization"] == "Bearer ops-access-1"
    assert search_request.headers["range"] == "1-2"
    assert search_request.query == {
        "q": 'ta all "tactile robotic hand" AND pa="Acme Robotics" AND in="Road Runner" '
        'AND cpc="B25J15/00" AND pn=EP AND pd within "2015 2020"'
    }
    assert body["source"] == "epo"
    assert body["notes"] == [
        "epo matches query text in titles and abstracts only; OPS cannot search claims",
        "epo applied year_from/year_to to the publication date; OPS cannot search by filing date",
    ]
    # patent_office EP: the US document in the answer is filtered out.
    assert body["patents"] == [
        {
            "title": "TACTILE SENSING ROBOTIC HAND",
            "number": "EP3814077B1",
            "url": "https://worldwide.espacenet.com/patent/search?q=pn%3DEP3814077B1",
            "abstract": "A robotic hand has fingertips carrying tactile sensors.",
            "assignee": "Acme Robotics, Inc.",
            "inventor": "RUNNER ROAD",
            "filed": "2019-06-26",
            "granted": "2023-04-12",
        }
    ]


async def test_epo_token_is_reused_across_searches(make: Make, upstream: ReplayUpstream) -> None:
    serve_epo_token(upstream)
    upstream.fixture(*EPO_SEARCH, EPO_FIXTURE)
    patents = epo_only(make)
    first = await patents.search({"query": "gripper"})
    await patents.search({"query": "gripper", "search_type": "specific"})
    assert first["patents"][1] == {
        "title": "Gripper with compliant fingertip sensors",
        "number": "US2021154211A1",
        "url": "https://worldwide.espacenet.com/patent/search?q=pn%3DUS2021154211A1",
    }
    paths = [request.path for request in upstream.requests_to("ops.epo.org")]
    assert paths == [EPO_TOKEN[1], EPO_SEARCH[1], EPO_SEARCH[1]]
    assert upstream.requests_to("ops.epo.org")[2].query == {"q": 'ti="gripper"'}


async def test_epo_no_results_is_an_empty_answer_with_hints(
    make: Make, upstream: ReplayUpstream
) -> None:
    serve_epo_token(upstream)
    upstream.route(*EPO_SEARCH, Reply(404, EPO_NO_RESULTS, {"Content-Type": "application/xml"}))
    body = await epo_only(make).search({"query": "US10000000", "search_type": "specific"})
    assert upstream.requests_to("ops.epo.org")[1].query == {"q": "pn=US10000000"}
    assert body["patents"] == [] and body["source"] == "epo"
    assert body["hints"]["reason"] == "no_match"
    assert "use search_type=prior_art" in body["hints"]["suggestedActions"][0]


async def test_epo_rejected_credentials_never_show(
    make: Make, upstream: ReplayUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    upstream.json(*EPO_TOKEN, {"error": "invalid_client"}, status=401)
    error = await fails(epo_only(make).search({"query": "gripper"}))
    failure = failure_of(error)
    assert failure.kind is Kind.NOT_CONFIGURED and failure.provider == "epo"
    assert "EPO_OPS_KEY" in failure.message and "EPO_OPS_SECRET" in failure.message
    shown = json.dumps(failure.to_dict()) + caplog.text
    assert EPO_KEY not in shown and EPO_SECRET not in shown


async def test_epo_quota_refusal_is_a_rate_limit(make: Make, upstream: ReplayUpstream) -> None:
    serve_epo_token(upstream)
    fault = (
        b'<fault xmlns="http://ops.epo.org"><code>CLIENT.RobotDetected</code>'
        b"<message>Recent behaviour implies you are a robot</message></fault>"
    )
    upstream.route(
        *EPO_SEARCH,
        Reply(403, fault, {"X-Rejection-Reason": "IndividualQuotaPerHour", "Retry-After": "60"}),
    )
    error = await fails(epo_only(make).search({"query": "gripper"}))
    failure = failure_of(error)
    assert failure.kind is Kind.RATE_LIMIT and failure.provider == "epo"
    assert "IndividualQuotaPerHour" in failure.message
    assert error.retry_after == 60.0


# -- both ----------------------------------------------------------------------------


async def test_a_failing_provider_is_skipped_and_said_so(
    make: Make, upstream: ReplayUpstream
) -> None:
    upstream.json(*LENS, {"message": "Too many requests"}, status=429)
    serve_epo_token(upstream)
    upstream.fixture(*EPO_SEARCH, EPO_FIXTURE)
    patents = make(LENS_API_TOKEN=LENS_TOKEN, EPO_OPS_KEY=EPO_KEY, EPO_OPS_SECRET=EPO_SECRET)
    body = await patents.search({"query": "gripper"})
    assert body["source"] == "epo"
    assert body["notes"][0].startswith("lens failed and was skipped (rate_limit)")
    assert body["resultCount"] == 2


async def test_when_every_provider_fails_the_first_failure_leads(
    make: Make, upstream: ReplayUpstream
) -> None:
    upstream.json(*LENS, {"message": "bad token"}, status=401)
    upstream.json(*EPO_TOKEN, {"error": "invalid_client"}, status=401)
    patents = make(LENS_API_TOKEN=LENS_TOKEN, EPO_OPS_KEY=EPO_KEY, EPO_OPS_SECRET=EPO_SECRET)
    error = await fails(patents.search({"query": "gripper"}))
    failure = failure_of(error)
    assert failure.kind is Kind.NOT_CONFIGURED and failure.provider == "lens"
    assert "LENS_API_TOKEN" in failure.message and "EPO_OPS_SECRET" in failure.message


# -- cache key ------------------------------------------------------------------------
