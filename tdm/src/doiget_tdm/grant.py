"""What every TDM source shares: the key read from its grant, and its refusals."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from doiget.capability import TdmGrant
from doiget.errors import DenialReason, DoigetError, ErrorCode, denied


def key_of(grant: TdmGrant, publisher: str) -> str:
    """The API key of ``grant``, which must be ``publisher``'s own."""
    if grant.publisher != publisher:
        raise denied(
            ErrorCode.CAPABILITY_DENIED,
            f"a {grant.publisher} grant cannot be used for {publisher}.",
            DenialReason.CAPABILITY_NOT_GRANTED,
            source=f"tdm-{publisher}",
            expected=[publisher],
        )
    return grant.api_key.reveal()


def not_entitled(publisher: str, doi: str, why: str) -> DoigetError:
    """The publisher will not give this key the full text of ``doi``."""
    return denied(
        ErrorCode.CAPABILITY_DENIED,
        f"tdm-{publisher}: {why} for {doi}; the key's TDM entitlement does not cover it. "
        "Nothing was stored from this source.",
        DenialReason.CAPABILITY_NOT_GRANTED,
        source=f"tdm-{publisher}",
        attempted=doi,
    )


@contextmanager
def key_refusals(publisher: str, doi: str, who: str) -> Iterator[None]:
    """Within the block, the publisher turning the key away (HTTP 401 or 403) is an
    entitlement denial; every other error passes as it is."""
    try:
        yield
    except DoigetError as error:
        if (error.details or {}).get("status") in (401, 403):
            raise not_entitled(publisher, doi, f"{who} refused the key") from None
        raise
