"""The search helpers every provider shares: query text, notes, hits and attribution."""

from __future__ import annotations

import pytest

from doiget.errors import DenialContext, DenialReason, DoigetError, ErrorCode
from doiget.web.failure import Kind, failure_of, kind_of
from doiget.web.providers.base import (
    EXACT_TERMS,
    EXCLUDE_TERMS,
    SITES,
    ProviderQuery,
    SearchHit,
    StatusMeaning,
    attribute,
    attributed,
    cap_sites,
    capped_count,
    compose_query,
    hits_from,
    not_applied,
    split_terms,
    unsupported_notes,
    web_url,
)
from doiget.web.providers.duckduckgo import region, unwrap
from doiget.web.providers.google import language_restriction

# -- compose_query ------------------------------------------------------------------


def test_a_bare_query_is_sent_as_given_without_notes() -> None:
    assert compose_query(ProviderQuery("  rust borrow checker "), provider="brave") == (
        "rust borrow checker",
        (),
    )


def test_exact_terms_are_quoted_once_and_stray_quotes_dropped() -> None:
    request = ProviderQuery("asyncio", exact_terms='"task  group"')
    assert compose_query(request, provider="brave")[0] == 'asyncio "task group"'


def test_each_exclude_term_gets_a_minus_and_a_quoted_phrase_stays_whole() -> None:
    request = ProviderQuery("jaguar", exclude_terms='car -cars "land rover"')
    query, notes = compose_query(request, provider="duckduckgo")
    assert query == 'jaguar -car -cars -"land rover"'
    assert notes == ()


def test_an_unbalanced_quote_in_exclude_terms_still_gives_plain_terms() -> None:
    assert split_terms('car "land rover') == ["car", "land", "rover"]
    assert split_terms(None) == []
    assert split_terms("  ") == []


def test_one_site_is_a_bare_site_term() -> None:
    request = ProviderQuery("tokio", sites=("docs.rs",))
    assert compose_query(request, provider="searxng")[0] == "tokio site:docs.rs"


def test_several_sites_are_or_joined_in_parentheses_after_the_other_operators() -> None:
    request = ProviderQuery(
        "tokio", sites=("docs.rs", "github.com"), exact_terms="spawn", exclude_terms="wasm"
    )
    assert (
        compose_query(request, provider="searxng")[0]
        == 'tokio "spawn" -wasm (site:docs.rs OR site:github.com)'
    )


def test_native_fields_are_left_out_of_the_query() -> None:
    request = ProviderQuery(
        "tokio", sites=("docs.rs", "github.com"), exact_terms="spawn", exclude_terms="wasm"
    )
    native = frozenset({SITES, EXACT_TERMS, EXCLUDE_TERMS})
    assert compose_query(request, native=native, provider="google") == ("tokio", ())


def test_sites_beyond_the_cap_are_dropped_with_a_note_saying_how_many() -> None:
    sites = tuple(f"site{i}.example" for i in range(14))
    query, notes = compose_query(ProviderQuery("q", sites=sites), provider="brave", max_sites=10)
    assert query == "q (" + " OR ".join(f"site:site{i}.example" for i in range(10)) + ")"
    assert notes == (
        "14 site domains were given; brave takes at most 10, so the first 10 were searched "
        "and 4 were dropped",
    )


def test_sites_within_the_cap_and_repeats_bring_no_note() -> None:
    kept, notes = cap_sites(("a.org", "b.org", "a.org"), 2, "google")
    assert kept == ("a.org", "b.org")
    assert notes == ()


# -- notes for filters a provider cannot honour ---------------------------------------


def test_the_not_applied_note_names_the_filter_and_the_provider() -> None:
    assert not_applied("language", "duckduckgo") == (
        "language is not supported by duckduckgo and was not applied"
    )
    assert not_applied("safe", "tavily") == (
        "safe search is not supported by tavily and was not applied"
    )


def test_only_filters_the_caller_asked_for_produce_notes() -> None:
    filters = ("language", "country", "time_range", "safe")
    assert unsupported_notes(ProviderQuery("q"), "tavily", filters) == ()
    assert unsupported_notes(ProviderQuery("q", safe="off"), "tavily", filters) == ()
    asked = ProviderQuery("q", language="de", time_range="week", safe="high")
    assert unsupported_notes(asked, "tavily", filters) == (
        "language is not supported by tavily and was not applied",
        "time_range is not supported by tavily and was not applied",
        "safe search is not supported by tavily and was not applied",
    )


def test_a_count_above_the_cap_is_clamped_with_a_note() -> None:
    assert capped_count(ProviderQuery("q", num_results=8), 10, "google") == (8, ())
    assert capped_count(ProviderQuery("q", num_results=15), 10, "google") == (
        10,
        ("google returns at most 10 results per search; 15 were asked for",),
    )


@pytest.mark.parametrize(
    ("country", "language", "kl", "notes"),
    [
        ("us", "en", "us-en", ()),
        ("GB", None, "uk-en", ()),
        ("ch", "fr", "ch-fr", ()),
        ("jp", "ja", "jp-jp", ()),
        ("de", "en", "de-de", ("language is not supported by duckduckgo and was not applied",)),
        (None, "de", None, ("language is not supported by duckduckgo and was not applied",)),
        ("zz", None, None, ("country 'zz' has no duckduckgo region and was not applied",)),
        (None, None, None, ()),
    ],
)
def test_duckduckgo_region_comes_from_country_and_its_languages(
    country: str | None, language: str | None, kl: str | None, notes: tuple[str, ...]
) -> None:
    assert region(ProviderQuery("q", country=country, language=language)) == (kl, notes)


def test_google_language_codes_use_googles_spellings() -> None:
    assert language_restriction("de") == "lang_de"
    assert language_restriction("he") == "lang_iw"
    assert language_restriction("zh") == "lang_zh-CN"
    assert language_restriction("sw") is None


# -- hits ---------------------------------------------------------------------------


def test_duckduckgo_redirect_links_are_unwrapped() -> None:
    wrapped = "//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.example%2Fp%3Fx%3D1%26y%3D2%23top&rut=ab"
    assert unwrap(wrapped) == "https://a.example/p?x=1&y=2#top"
    assert unwrap("https://b.example/") == "https://b.example/"


def test_hits_keep_http_urls_once_strip_markup_and_stop_at_the_limit() -> None:
    rows = [
        ("<strong>One</strong> &amp; only", "https://a.example/1", "a &#x27;quoted&#x27; word"),
        ("Relative", "/relative/path", "skipped"),
        ("Mail", "mailto:x@example.org", "skipped"),
        ("Again", "https://a.example/1", "a repeat is skipped"),
        (None, "http://b.example/2", None),
        ("Three", "https://c.example/3", "over the limit"),
    ]
    assert hits_from(rows, 2) == (
        SearchHit("One & only", "https://a.example/1", "a 'quoted' word"),
        SearchHit("http://b.example/2", "http://b.example/2", ""),
    )


def test_text_from_a_parsed_page_is_not_parsed_again() -> None:
    rows = [("Use <script> &amp; co", "https://a.example/", "a  <b>literal</b> tag")]
    assert hits_from(rows, 5, markup=False) == (
        SearchHit("Use <script> &amp; co", "https://a.example/", "a <b>literal</b> tag"),
    )


def test_web_url_accepts_only_absolute_http_urls() -> None:
    assert web_url(" https://a.example/x ") == "https://a.example/x"
    assert web_url("ftp://a.example/x") is None
    assert web_url("https://") is None
    assert web_url(42) is None


# -- attribution of net/ errors -------------------------------------------------------


def _net_error(status: int, code: ErrorCode = ErrorCode.NETWORK_ERROR) -> DoigetError:
    return DoigetError(
        code, f"brave refused the URL with HTTP {status}.", details={"status": status}
    )


def test_a_net_error_keeps_its_kind_and_gains_the_provider() -> None:
    error = attribute(_net_error(500), "brave")
    assert error.details == {"status": 500, "provider": "brave"}
    assert failure_of(error).provider == "brave"
    assert kind_of(error) is Kind.NETWORK


def test_a_denial_keeps_its_context_when_attributed() -> None:
    denial = DenialContext(DenialReason.SIZE_CAP_EXCEEDED, source="google", cap=1, actual=2)
    error = attribute(DoigetError(ErrorCode.CAPABILITY_DENIED, "too big", denial), "google")
    assert error.denial is denial
    assert (error.details or {})["provider"] == "google"


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_is_not_configured_and_names_the_variable(status: int) -> None:
    error = attribute(_net_error(status), "brave", key_vars="BRAVE_API_KEY")
    assert kind_of(error) is Kind.NOT_CONFIGURED
    assert error.message == (f"brave rejected the API key (HTTP {status}); check BRAVE_API_KEY.")
    assert failure_of(error).provider == "brave"


def test_a_403_without_a_key_is_left_to_the_default_reading() -> None:
    assert kind_of(attribute(_net_error(403), "duckduckgo")) is Kind.BLOCKED


def test_rate_limiting_keeps_its_wait() -> None:
    limited = DoigetError(
        ErrorCode.RATE_LIMITED, "slow down", retry_after=42.0, details={"status": 429}
    )
    error = attribute(limited, "tavily", key_vars="TAVILY_API_KEY")
    assert kind_of(error) is Kind.RATE_LIMIT
    assert error.retry_after == 42.0
    assert failure_of(error).to_dict()["provider"] == "tavily"


def test_a_providers_own_status_meaning_comes_first() -> None:
    meaning = StatusMeaning(Kind.NOT_CONFIGURED, "json is off", "enable it")
    error = attribute(_net_error(403), "searxng", statuses={403: meaning})
    failure = failure_of(error)
    assert (failure.kind, failure.message, failure.suggested_action) == (
        Kind.NOT_CONFIGURED,
        "json is off",
        "enable it",
    )


def test_an_error_already_attributed_passes_through_unchanged() -> None:
    original = DoigetError(ErrorCode.NOT_FOUND, "x", details={"provider": "google"})
    with pytest.raises(DoigetError) as caught, attributed("brave"):
        raise original
    assert caught.value is original
