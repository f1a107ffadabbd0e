"""The shapes a credential takes in the text it can leak into.

Upstreams echo a key back in many spellings: as sent, cut at either end, in hex, in
base64 or base64url (the key alone, or inside ``user:key`` and ``key:secret`` of a
Basic header, padded or not). Percent and JSON escapes are undone by
:mod:`doiget.textviews` before any form is looked for, and case is ignored, so a
form here is one spelling, folded (:func:`fold`).

A credential of :data:`PARTIAL_MIN_CHARS` characters or more is *long*: any piece of
8 or more characters of any of its forms counts. Base64 regroups bytes by three, so
a key inside a longer encoded string (behind a user name of any length) shows as one
of three runs depending on where it starts; each run holds only the characters that
depend on the key alone. A shorter credential counts only as a whole token, and so
do its encodings and those of ``a:b`` pairs of short credentials, when 8 characters
or longer (shorter ones would blank ordinary words).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import permutations
from typing import Final

# A copy this long of any stretch of a secret's forms is taken for the secret.
PARTIAL_MIN_CHARS: Final = 8
# base64url's characters, which :func:`fold` reads as base64's.
_UNFOLD: Final = {"+": "-", "/": "_"}


def fold(text: str) -> str:
    """``text`` lower-cased, every position kept, with base64url's ``-`` and ``_``
    read as base64's ``+`` and ``/``: the one spelling forms are compared in."""
    lowered = text.lower()
    if len(lowered) != len(text):  # some characters lengthen when lower-cased
        lowered = "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in text)
    return lowered.replace("-", "+").replace("_", "/")


@dataclass(frozen=True)
class SecretForms:
    """The folded forms of a set of credentials.

    ``partial``: any piece of :data:`PARTIAL_MIN_CHARS` or more of these counts.
    ``encoded``: those of ``partial`` that are base64 runs; a match there covers the
    whole base64 word around it (its edges carry bits of the key too).
    ``whole``: these count only as whole tokens.
    """

    partial: frozenset[str]
    encoded: frozenset[str]
    whole: frozenset[str]

    def characters(self) -> frozenset[str]:
        """Every character a form can be spelled with before folding."""
        folded = {char for form in self.partial | self.whole for char in form}
        upper = {char.upper() for char in folded}
        unfolded = {char for char in upper if len(char) == 1} | {_UNFOLD.get(c, c) for c in folded}
        return frozenset(folded | unfolded)


def secret_forms(secrets: Iterable[str]) -> SecretForms:
    """Every form of every credential in ``secrets`` (empty ones ignored)."""
    given = {secret for secret in secrets if secret}
    short = sorted(secret for secret in given if len(secret) < PARTIAL_MIN_CHARS)
    pairs = {f"{first}:{second}" for first, second in permutations(short, 2)}
    partial: set[str] = set()
    encoded: set[str] = set()
    whole: set[str] = set()
    for secret in given | pairs:
        data = secret.encode("utf-8", "surrogatepass")
        plain = {secret, secret.replace(" ", "+")}
        if len(secret) >= PARTIAL_MIN_CHARS:
            partial.update(plain, {data.hex()})
            encoded.update(_base64_runs(data))
        else:
            whole.update(plain)
            padded = base64.b64encode(data).decode("ascii")
            spellings = (data.hex(), padded, padded.rstrip("="))
            whole.update(f for f in spellings if len(f) >= PARTIAL_MIN_CHARS)
    partial |= encoded
    return SecretForms(
        partial=frozenset(map(fold, partial)),
        encoded=frozenset(map(fold, encoded)),
        whole=frozenset(map(fold, whole)),
    )


def _base64_runs(data: bytes) -> Iterator[str]:
    """The base64 characters that depend on ``data`` alone wherever it sits in a longer
    encoded string: one run for each place its first byte can take in a 3-byte group."""
    for skip in range(3):
        body = data[skip:]
        body = body[: len(body) - len(body) % 3]
        if body:
            yield base64.b64encode(body).decode("ascii")
