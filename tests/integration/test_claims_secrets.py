"""A claim check's answer never carries the process's secrets (an index's API key, the
contact address sent to sources), even when a source that fails echoes them back."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from claimsutil import PNAS, checking

from doiget.claims.contracts import CheckClaims
from doiget.contract import parse, plain

from replay import ReplayUpstream, Reply

# Requests spaced by no gap: the subject is what the answers hold, and a failing source is
# asked again and again (see tests/pacing.py).
pytestmark = pytest.mark.usefixtures("unpaced")

KEY = "s2-secret-key-9f8e7d6c5b4a"
EMAIL = "private-contact@example.org"
BIB = (
    "@article{makris2014, title={Developing functional musculoskeletal tissues through "
    "hypoxia and lysyl oxidase-induced collagen cross-linking}, author={Makris, "
    f"Eleftherios A. and others}}, year={{2014}}, doi={{{PNAS}}}}}"
)


@pytest.mark.parametrize("status", [503, 400, 200])
@pytest.mark.parametrize("ref", [PNAS, BIB, f"https://doi.org/{PNAS}"])
def test_no_secret_reaches_the_answer_when_a_source_echoes_it(
    upstream: ReplayUpstream, doiget_env: dict[str, str], status: int, ref: str
) -> None:
    echoed = f"key={KEY} mailto={EMAIL} <{EMAIL}>".encode()
    for host, path in [
        ("api.crossref.org", f"/works/{PNAS}"),
        ("api.crossref.org", "/works"),
        ("dblp.org", "/search/publ/api"),
        ("api.unpaywall.org", f"/v2/{PNAS}"),
    ]:
        upstream.route(host, path, Reply(status, echoed))
    env = {**doiget_env, "SEMANTIC_SCHOLAR_API_KEY": KEY, "DOIGET_EMAIL": EMAIL}
    request = parse(CheckClaims, {"items": [{"claim": "Collagen cross-linking.", "ref": ref}]})

    async def check(checker: Any) -> Any:
        return await checker.check(request)

    answer = json.dumps(plain(anyio.run(checking, env, check)))
    assert KEY not in answer and EMAIL not in answer
    assert "unavailable" in answer or "error" in answer
