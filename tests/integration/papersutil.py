"""Routes for the papers tests: recorded upstream answers for a handful of real works."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from doiget.net.network import Network
from doiget.papers.service import Papers
from doiget.runtime import load_runtime

from netutil import FAST_RETRY
from replay import ReplayUpstream, Reply

STUB_PDF = "pdf/colrev-SrivastavaShainesh2015-stub.pdf"
JOSE_PDF = "pdf/openquestion-jose-paper.pdf"
MEDIA_PDF = "pdf/paperqa-duplicate_media.pdf"

NATURE = "10.1038/nature12373"
PHYSREVE = "10.1103/physreve.88.012814"
JNS = "10.1016/j.jns.2020.116832"
PNAS = "10.1073/pnas.1414271111"
CLOSED = "10.1023/a:1007154515475"

CROSSREF_DOWN = Reply(503, b"Service Unavailable")
LOGIN_PAGE = Reply(
    200, b"<!DOCTYPE html><html><body>Sign in</body></html>", {"Content-Type": "text/html"}
)


def make_papers(env: dict[str, str]) -> Papers:
    """The papers core exactly as the program builds it, with quick retries."""
    runtime = load_runtime(env)
    return Papers(runtime, Network(runtime.settings, retry=FAST_RETRY))


def read_toml(path: Path) -> dict[str, Any]:
    with path.open("rb") as handle:
        return tomllib.load(handle)


def route_nature(upstream: ReplayUpstream) -> bytes:
    """Crossref down; Unpaywall's best location off the allowlist; Europe PMC serves the PDF."""
    upstream.route("api.crossref.org", f"/works/{NATURE}", CROSSREF_DOWN)
    upstream.fixture("api.unpaywall.org", f"/v2/{NATURE}", "unpaywall/v2-10.1038_nature12373.json")
    return upstream.fixture("europepmc.org", "/articles/pmc4221854", JOSE_PDF)


def route_physreve(upstream: ReplayUpstream) -> bytes:
    """The publisher answers HTML; the arXiv copy Unpaywall lists is the PDF."""
    upstream.route("api.crossref.org", f"/works/{PHYSREVE}", CROSSREF_DOWN)
    upstream.fixture(
        "api.unpaywall.org", f"/v2/{PHYSREVE}", "unpaywall/v2-10.1103_physreve.88.012814.json"
    )
    upstream.route("link.aps.org", "/accepted/10.1103/PhysRevE.88.012814", LOGIN_PAGE)
    return upstream.fixture("arxiv.org", "/pdf/1304.0473", MEDIA_PDF)


def route_jns(upstream: ReplayUpstream) -> bytes:
    """Unpaywall's PDF URL is a doi.org link that redirects to the publisher's PDF."""
    upstream.route("api.crossref.org", f"/works/{JNS}", CROSSREF_DOWN)
    upstream.fixture(
        "api.unpaywall.org", f"/v2/{JNS}", "unpaywall/v2-10.1016_j.jns.2020.116832.json"
    )
    target = "https://www.sciencedirect.com/science/article/pii/S0022510X20301696/pdfft"
    upstream.redirect("doi.org", f"/{JNS}", target)
    return upstream.fixture(
        "www.sciencedirect.com", "/science/article/pii/S0022510X20301696/pdfft", STUB_PDF
    )


def route_pnas(upstream: ReplayUpstream) -> None:
    """Crossref metadata; the only OA PDF is on a host off the allowlist."""
    upstream.fixture(
        "api.crossref.org", f"/works/{PNAS}", "crossref/works-10.1073_pnas.1414271111.json"
    )
    upstream.fixture(
        "api.unpaywall.org", f"/v2/{PNAS}", "unpaywall/v2-10.1073_pnas.1414271111.json"
    )


def route_closed(upstream: ReplayUpstream) -> None:
    """A closed-access article: metadata but no OA location."""
    upstream.fixture(
        "api.crossref.org", f"/works/{CLOSED}", "crossref/works-10.1023_a_1007154515475.json"
    )
    upstream.fixture(
        "api.unpaywall.org", f"/v2/{CLOSED}", "unpaywall/v2-10.1023_a_1007154515475.json"
    )
