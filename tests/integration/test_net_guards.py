"""The network guards against a real TLS upstream: allowlists, schemes, SSRF, caps."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from doiget.errors import DenialReason, DoigetError, ErrorCode
from doiget.net.allowlist import default_hosts

from netutil import CountingBackend, make_network, raised
from replay import FIXTURES, ReplayUpstream, Reply

CROSSREF_WORK = "crossref/works-10.1371_journal.pone.0033693.json"
STUB_PDF = "pdf/colrev-SrivastavaShainesh2015-stub.pdf"


async def test_recorded_crossref_work_is_read_through_the_host_map(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    body = upstream.fixture(
        "api.crossref.org", "/works/10.1371/journal.pone.0033693", CROSSREF_WORK
    )
    network = make_network(doiget_env)
    try:
        data = await network.client("crossref").get_json(
            "https://api.crossref.org/works/10.1371/journal.pone.0033693"
        )
    finally:
        await network.aclose()
    assert data == json.loads(body)
    (request,) = upstream.requests
    assert request.host == "api.crossref.org"
    assert request.headers["user-agent"].endswith("(mailto:tests@example.org)")


async def test_redirect_off_allowlist_is_denied_with_context(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.redirect("api.crossref.org", "/start", "/moved")
    upstream.redirect("api.crossref.org", "/moved", "https://evil.example/steal")
    upstream.route("evil.example", "/steal", Reply(200, b"{}"))
    error = await raised(
        make_network(doiget_env),
        lambda network: network.client("crossref").get_json("https://api.crossref.org/start"),
    )
    assert error.code is ErrorCode.CAPABILITY_DENIED
    assert error.denial is not None
    assert error.denial.to_dict() == {
        "reason": "redirect_not_in_allowlist",
        "source": "crossref",
        "attempted": "evil.example",
        "expected": list(default_hosts("crossref")),
        "hop_index": 2,
    }
    assert upstream.requests_to("evil.example") == []


async def test_redirect_to_http_is_denied_as_insecure_scheme(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.redirect("arxiv.org", "/pdf/2401.00001", "http://arxiv.org/pdf/2401.00001v1")
    error = await raised(
        make_network(doiget_env),
        lambda network: network.client("arxiv").get("https://arxiv.org/pdf/2401.00001"),
    )
    denial = error.denial
    assert denial is not None
    assert denial.reason is DenialReason.INSECURE_SCHEME
    assert denial.hop_index == 1
    assert denial.source == "arxiv"
    assert denial.attempted == "http://arxiv.org/pdf/2401.00001v1"
    assert len(upstream.requests) == 1


async def test_http_link_from_upstream_data_is_upgraded_before_the_request(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route("arxiv.org", "/abs/2401.00001", Reply(200, b"ok"))
    network = make_network(doiget_env)
    try:
        fetched = await network.client("arxiv").get(
            "http://arxiv.org/abs/2401.00001", from_upstream=True
        )
    finally:
        await network.aclose()
    assert fetched.url == "https://arxiv.org/abs/2401.00001"
    assert fetched.content == b"ok"


async def test_eleven_redirects_are_denied_after_ten_hops(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    for hop in range(11):
        upstream.redirect("api.crossref.org", f"/r{hop}", f"/r{hop + 1}")
    upstream.route("api.crossref.org", "/r11", Reply(200, b"{}"))
    error = await raised(
        make_network(doiget_env),
        lambda network: network.client("crossref").get_json("https://api.crossref.org/r0"),
    )
    assert error.code is ErrorCode.CAPABILITY_DENIED
    denial = error.denial
    assert denial is not None
    assert (denial.cap, denial.actual, denial.hop_index) == (10, 11, 11)
    assert [request.path for request in upstream.requests] == [f"/r{hop}" for hop in range(11)]


async def test_ten_redirects_are_followed(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    for hop in range(10):
        upstream.redirect("api.crossref.org", f"/r{hop}", f"/r{hop + 1}")
    upstream.json("api.crossref.org", "/r10", {"status": "ok"})
    network = make_network(doiget_env)
    try:
        data = await network.client("crossref").get_json("https://api.crossref.org/r0")
    finally:
        await network.aclose()
    assert data == {"status": "ok"}


PRIVATE_URLS = [
    "https://10.0.0.1/x",
    "https://169.254.169.254/latest/meta-data/",
    "https://[::1]/x",
    "https://0x7f000001/x",
    "https://2130706433/x",
    "https://127.1/x",
    "https://[::ffff:127.0.0.1]/x",
    "https://[::ffff:a9fe:a9fe]/x",
    "https://100.64.0.1/x",
    "https://[fd00:ec2::254]/x",
    "https://localhost/x",
]


@pytest.mark.parametrize("url", PRIVATE_URLS)
async def test_private_address_is_refused_before_any_connection(
    url: str, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    backend = CountingBackend()
    network = make_network(doiget_env, backend=backend)
    try:
        with pytest.raises(DoigetError) as caught:
            await network.client("web", any_public_host=True).get(url)
    finally:
        await network.aclose()
    assert caught.value.code is ErrorCode.CAPABILITY_DENIED
    denial = caught.value.denial
    assert denial is not None
    assert denial.reason is DenialReason.SSRF_PRIVATE_ADDRESS
    assert denial.hop_index == 0
    assert backend.attempts == []
    assert upstream.connections == 0


async def test_redirect_into_private_space_is_refused_at_that_hop(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.redirect("cdn.example", "/file", "http://169.254.169.254/latest/meta-data/")
    backend = CountingBackend()
    error = await raised(
        make_network(doiget_env, backend=backend),
        lambda network: network.client("web", any_public_host=True).get("https://cdn.example/file"),
    )
    denial = error.denial
    assert denial is not None
    assert denial.reason is DenialReason.SSRF_PRIVATE_ADDRESS
    assert denial.hop_index == 1
    assert len(backend.attempts) == 1  # the mapped cdn.example only


async def test_pooled_connections_are_keyed_by_host_name(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route("journals.plos.org", "/a", Reply(200, b"plos"))
    upstream.route("europepmc.org", "/b", Reply(200, b"epmc"))
    network = make_network(doiget_env)
    client = network.client("web", any_public_host=True)
    try:
        first = await client.get("https://journals.plos.org/a")
        second = await client.get("https://europepmc.org/b")
        third = await client.get("https://journals.plos.org/a")
    finally:
        await network.aclose()
    assert (first.content, second.content, third.content) == (b"plos", b"epmc", b"plos")
    # Same address for both names, yet one connection each: never shared across names.
    assert upstream.connections == 2
    assert [r.host for r in upstream.requests] == [
        "journals.plos.org",
        "europepmc.org",
        "journals.plos.org",
    ]


async def test_block_list_refuses_a_host_its_allowlist_would_allow(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    Path(doiget_env["DOIGET_CONFIG"]).write_text('[blocklist]\nhosts = ["*.plos.org"]\n')
    error = await raised(
        make_network(doiget_env),
        lambda network: network.client("oa-publisher").get("https://journals.plos.org/x.pdf"),
    )
    denial = error.denial
    assert denial is not None
    assert denial.reason is DenialReason.HOST_IN_BLOCK_LIST
    assert upstream.requests == []


async def test_body_over_declared_cap_is_refused_unread(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route("api.crossref.org", "/big", Reply(200, b"x" * 4096))
    error = await raised(
        make_network(doiget_env),
        lambda network: network.client("crossref").get(
            "https://api.crossref.org/big", max_bytes=1024
        ),
    )
    denial = error.denial
    assert denial is not None
    assert denial.reason is DenialReason.SIZE_CAP_EXCEEDED
    assert (denial.cap, denial.actual) == (1024, 4096)


async def test_body_over_cap_without_declared_length_is_cut_while_streaming(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route("api.crossref.org", "/big", Reply(200, b"x" * 512, chunked=True, repeat=8))
    error = await raised(
        make_network(doiget_env),
        lambda network: network.client("crossref").get(
            "https://api.crossref.org/big", max_bytes=1024
        ),
    )
    denial = error.denial
    assert denial is not None
    assert denial.reason is DenialReason.SIZE_CAP_EXCEEDED
    assert denial.cap == 1024
    assert denial.actual is not None and 1024 < denial.actual <= 4096


async def test_pdf_is_judged_by_its_bytes_and_kept_only_when_moved(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    body = upstream.fixture(
        "journals.plos.org", "/paper.pdf", STUB_PDF, content_type="application/octet-stream"
    )
    store = tmp_path / "store"
    network = make_network(doiget_env)
    try:
        async with network.client("oa-publisher").download_pdf(
            "https://journals.plos.org/paper.pdf", store
        ) as pdf:
            assert pdf.size_bytes == len(body)
            assert pdf.sha256 == hashlib.sha256(body).hexdigest()
            assert pdf.path.read_bytes() == body
            pdf.path.rename(store / "kept.pdf")
        async with network.client("oa-publisher").download_pdf(
            "https://journals.plos.org/paper.pdf", store
        ) as pdf:
            temp = pdf.path
    finally:
        await network.aclose()
    assert not temp.exists()
    assert sorted(p.name for p in store.iterdir()) == ["kept.pdf"]


async def test_html_served_as_pdf_is_a_content_type_mismatch_with_nothing_on_disk(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    html = b"<!DOCTYPE html><html><body>Please log in</body></html>"
    upstream.route(
        "journals.plos.org", "/paper.pdf", Reply(200, html, {"Content-Type": "application/pdf"})
    )
    store = tmp_path / "store"
    network = make_network(doiget_env)
    try:
        with pytest.raises(DoigetError) as caught:
            async with network.client("oa-publisher").download_pdf(
                "https://journals.plos.org/paper.pdf", store
            ):
                pass
    finally:
        await network.aclose()
    denial = caught.value.denial
    assert denial is not None
    assert denial.reason is DenialReason.CONTENT_TYPE_MISMATCH
    assert denial.attempted == "application/pdf"
    assert not store.exists() or list(store.iterdir()) == []


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "undeclared"])
async def test_oversized_pdf_leaves_nothing_on_disk(
    chunked: bool, upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    pdf = (FIXTURES / STUB_PDF).read_bytes()
    upstream.route(
        "journals.plos.org",
        "/paper.pdf",
        Reply(200, pdf, {"Content-Type": "application/pdf"}, chunked=chunked, repeat=3),
    )
    store = tmp_path / "store"
    network = make_network(doiget_env)
    try:
        with pytest.raises(DoigetError) as caught:
            async with network.client("oa-publisher").download_pdf(
                "https://journals.plos.org/paper.pdf", store, max_bytes=len(pdf) * 2
            ):
                pass
    finally:
        await network.aclose()
    denial = caught.value.denial
    assert denial is not None
    assert denial.reason is DenialReason.SIZE_CAP_EXCEEDED
    assert denial.cap == len(pdf) * 2
    assert denial.actual is not None and denial.actual > len(pdf) * 2
    assert not store.exists() or list(store.iterdir()) == []


async def test_truncated_body_is_retried_then_reported_as_network_error(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route("api.crossref.org", "/cut", Reply(200, b'{"a": 1', declared_length=100))
    error = await raised(
        make_network(doiget_env),
        lambda network: network.client("crossref").get_json("https://api.crossref.org/cut"),
    )
    assert error.code is ErrorCode.NETWORK_ERROR
    assert len(upstream.requests) == 4


async def test_not_json_is_schema_drift(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route("api.crossref.org", "/works/x", Reply(200, b"<html>maintenance</html>"))
    error = await raised(
        make_network(doiget_env),
        lambda network: network.client("crossref").get_json("https://api.crossref.org/works/x"),
    )
    denial = error.denial
    assert denial is not None
    assert denial.reason is DenialReason.SCHEMA_DRIFT
    assert denial.source == "crossref"


async def test_404_is_not_found(upstream: ReplayUpstream, doiget_env: dict[str, str]) -> None:
    upstream.route(
        "api.crossref.org", "/works/10.1371/notarealdoi", Reply(404, b"Resource not found.")
    )
    network = make_network(doiget_env)
    try:
        with pytest.raises(DoigetError) as caught:
            await network.client("crossref").get_json(
                "https://api.crossref.org/works/10.1371/notarealdoi"
            )
    finally:
        await network.aclose()
    assert caught.value.code is ErrorCode.NOT_FOUND
    assert len(upstream.requests) == 1


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("https://link.springer.com/pdf/a", "https://www.nature.com/pdf/a"),
        ("https://www.nature.com/articles/a.pdf", "https://link.springer.com/content/a.pdf"),
    ],
    ids=["springer-to-nature", "nature-to-springer"],
)
async def test_a_credential_header_never_follows_a_redirect_to_another_origin(
    upstream: ReplayUpstream, doiget_env: dict[str, str], first: str, second: str
) -> None:
    """Only Accept headers cross origins; the key headers stay with the first host."""
    start, target = urlsplit(first), urlsplit(second)
    upstream.redirect(start.netloc, start.path, second)
    upstream.fixture(target.netloc, target.path, STUB_PDF)
    network = make_network(doiget_env)
    headers = {
        "Authorization": "Bearer hop-secret-0123456789",
        "X-ELS-APIKey": "hop-secret-0123456789",
        "x-api-key": "hop-secret-0123456789",
        "Accept": "application/pdf",
    }
    try:
        async with network.client("oa-publisher").download_pdf(
            first, Path(doiget_env["DOIGET_DATA_DIR"]), headers=headers
        ) as pdf:
            assert pdf.size_bytes > 0
    finally:
        await network.aclose()
    sent_first, sent_second = upstream.requests
    assert sent_first.headers["authorization"] == "Bearer hop-secret-0123456789"
    assert sent_second.headers["accept"] == "application/pdf"
    assert not {"authorization", "x-els-apikey", "x-api-key"} & set(sent_second.headers)
