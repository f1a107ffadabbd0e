"""TDM sources in a fetch: the publishers' own APIs, tried after every Open Access
candidate failed, each only for its DOI prefixes and only under its grant.

The sources are not part of doiget itself: the ``doiget-tdm`` distribution (the
``tdm`` extra) registers them under the ``doiget.tdm`` entry points. A source's
``download`` takes the :class:`~doiget.capability.TdmGrant` as an argument and reads
the key from it alone, so no code can send a key it was not granted.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from importlib.metadata import entry_points
from pathlib import Path
from typing import Protocol

from doiget.capability import TDM_ENTRY_POINTS, TdmGrant
from doiget.net.client import DownloadedPdf, SourceClient
from doiget.refs import Ref
from doiget.upstreams import Gate, Upstream, agree_var, all_upstreams, key_var


class TdmSource(Protocol):
    """A publisher's TDM API as the ``doiget.tdm`` entry points provide it."""

    publisher: str

    def download(
        self, doi: str, grant: TdmGrant, client: SourceClient, dest_dir: Path
    ) -> AbstractAsyncContextManager[DownloadedPdf]:
        """The PDF of ``doi`` in a checked temp file in ``dest_dir`` (see
        :meth:`SourceClient.download_pdf`), or a DoigetError saying why not."""
        ...


def source_name(publisher: str) -> str:
    """The name a TDM source has in results and provenance rows (``tdm-elsevier``)."""
    return f"tdm-{publisher}"


def publishers_for(ref: Ref) -> list[Upstream]:
    """The TDM publishers whose DOI prefixes cover ``ref`` (none for an arXiv id)."""
    if ref.kind != "doi":
        return []
    return [u for u in all_upstreams() if u.gate is Gate.TDM and u.serves_doi(ref.value)]


def load_source(publisher: str) -> TdmSource:
    """The installed TDM source of ``publisher`` (check the grant first)."""
    for point in entry_points(group=TDM_ENTRY_POINTS, name=publisher):
        source: TdmSource = point.load()
        return source
    raise LookupError(f"no TDM source for {publisher} is installed")


def grant_hint(publishers: list[Upstream]) -> str:
    """What would let a TDM source try a ref that no granted source covers."""
    if not publishers:
        return ""
    options = " or ".join(
        f"{u.label} ({agree_var(u.name)}=1 and {key_var(u.name)})" for u in publishers
    )
    return f" A TDM grant could serve it: {options}, if you hold one."
