"""Routes for the integrity tests: Crossref's recorded records of a retracted paper, a
paper retracted after an expression of concern, one under an expression of concern,
a correction notice, and an update that is not about integrity."""

from __future__ import annotations

import json
from typing import Any

from papersutil import JOSE_PDF
from replay import FIXTURES, ReplayUpstream

WAKEFIELD = "10.1016/s0140-6736(97)11096-0"
NEJM = "10.1056/nejmoa2007621"
EJOGRB = "10.1016/j.ejogrb.2014.02.038"
ERRATUM = "10.1002/job.1858"
COCHRANE = "10.1002/14651858.cd008900.pub3"

RECORDS = {
    WAKEFIELD: "crossref/crossref-works-10.1016_s0140-6736_97_11096-0-wakefield-"
    "updated-by-retraction.json",
    NEJM: "crossref/crossref-pruned-10.1056_nejmoa2007621-expression-of-concern-"
    "and-retraction.json",
    EJOGRB: "crossref/crossref-pruned-10.1016_j.ejogrb.2014.02.038-expression-of-concern.json",
    COCHRANE: "crossref/crossref-pruned-10.1002_14651858.cd008900.pub3-update-to-new_version.json",
}
ERRATUM_ITEM = "crossref/crossref-item-10.1002_job.1858-erratum-update-to-correction.json"

# What each paper's integrity must read, everywhere it is shown.
EXPECTED: dict[str, list[dict[str, str]]] = {
    WAKEFIELD: [
        {
            "kind": "retraction",
            "notice_doi": "10.1016/s0140-6736(10)60175-4",
            "date": "2010-02-06",
            "source": "retraction-watch",
            "retraction_watch_id": "4036",
        },
        {
            "kind": "correction",
            "notice_doi": "10.1016/s0140-6736(04)15715-2",
            "date": "2004-03-06",
            "source": "retraction-watch",
            "retraction_watch_id": "17269",
        },
    ],
    NEJM: [
        {
            "kind": "retraction",
            "notice_doi": "10.1056/nejmc2021225",
            "date": "2020-06-04",
            "source": "retraction-watch",
            "retraction_watch_id": "23530",
        },
        {
            "kind": "expression_of_concern",
            "notice_doi": "10.1056/nejme2020822",
            "date": "2020-06-02",
            "source": "retraction-watch",
            "retraction_watch_id": "23525",
        },
    ],
    # Recorded twice (publisher and Retraction Watch): one notice, the publisher's.
    EJOGRB: [
        {
            "kind": "expression_of_concern",
            "notice_doi": "10.1016/j.ejogrb.2024.06.039",
            "date": "2024-08-01",
            "source": "publisher",
            "retraction_watch_id": "70752",
        }
    ],
    # The erratum is itself the notice: it corrects another paper.
    ERRATUM: [{"kind": "correction", "notice_of": "10.1002/job.1787", "date": "2013-02-26"}],
}
# What a citation of each says (BibTeX note, CSL note, formatted references, RIS).
SAID = {
    WAKEFIELD: "Retracted (2010-02-06), notice https://doi.org/10.1016/s0140-6736(10)60175-4",
    NEJM: "Retracted (2020-06-04), notice https://doi.org/10.1056/nejmc2021225",
    EJOGRB: "Expression of concern (2024-08-01), notice https://doi.org/10.1016/j.ejogrb.2024.06.039",
    ERRATUM: "Correction to https://doi.org/10.1002/job.1787",
}


def record(doi: str) -> dict[str, Any]:
    """The recorded Crossref answer for ``doi`` (the erratum's list item as a message)."""
    if doi == ERRATUM:
        return {"message": json.loads((FIXTURES / ERRATUM_ITEM).read_text())}
    data: dict[str, Any] = json.loads((FIXTURES / RECORDS[doi]).read_text())
    return data


def without_notices(doi: str, *kinds: str) -> dict[str, Any]:
    """The record as Crossref gave it before the notices of ``kinds`` were deposited."""
    data = record(doi)
    message = data["message"]
    message["updated-by"] = [n for n in message.get("updated-by", []) if n["type"] not in kinds]
    return data


def route_integrity(upstream: ReplayUpstream) -> bytes:
    """Crossref's records of the five papers; Wakefield's PDF from Europe PMC (the location
    a recorded Unpaywall answer lists). Returns the PDF's bytes."""
    for doi in (*RECORDS, ERRATUM):
        upstream.json("api.crossref.org", f"/works/{doi}", record(doi))
    upstream.fixture(
        "api.unpaywall.org", f"/v2/{WAKEFIELD}", "unpaywall/v2-10.1038_nature12373.json"
    )
    return upstream.fixture("europepmc.org", "/articles/pmc4221854", JOSE_PDF)
