"""One redactor for every text: a configured secret never shows in errors, tool
results or any library's logs, whether copied whole or cut at either end, re-cased,
percent-encoded (any of its characters, in either hex case, once or twice over),
JSON-escaped, in hex, or in base64 / base64url (alone, or inside a ``user:key`` or
``key:secret`` pair at any offset, padded or not, cut or whole)."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import random
from urllib.parse import quote, urlencode

import pytest

from doiget.errors import DoigetError, ErrorCode
from doiget.redaction import (
    REDACTED,
    _matcher,
    redact_known,
    redact_text,
    redact_value,
    remember_secrets,
)

SECRET = "Sk-Live_9fA3c7QwErTy+/="
OTHER = "epoConsumerSecret42"  # a second configured secret (EPO's key:secret pair)


@pytest.mark.parametrize(
    "echo",
    [
        SECRET,
        SECRET.lower(),
        SECRET.upper(),
        SECRET[:8],
        SECRET[:12].lower(),
        "Sk-Live_9fA3c7QwErTy%2B%2F%3D",  # percent-encoded
        "Sk-Live_9fA3c7QwErTy%2B%2F%3d".upper(),
        "Sk-Live_9fA3c7QwErTy%2B%2F%3D"[:15],
    ],
)
def test_every_copy_of_a_secret_is_redacted(echo: str) -> None:
    text = f'{{"message": "Forbidden for key {echo}"}}'
    assert redact_text(text, [SECRET]) == f'{{"message": "Forbidden for key {REDACTED}"}}'


def test_copies_shorter_than_eight_characters_are_left_alone() -> None:
    assert redact_text(f"a {SECRET[:7]} b", [SECRET]) == f"a {SECRET[:7]} b"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key=k&cx=1", f"key={REDACTED}&cx=1"),
        ("check BRAVE_API_KEY and the key k.", f"check BRAVE_API_KEY and the key {REDACTED}."),
        ("K", REDACTED),
        ("Backend kind kk", "Backend kind kk"),
    ],
)
def test_a_short_secret_counts_only_as_a_whole_token(text: str, expected: str) -> None:
    assert redact_text(text, ["k"]) == expected


def test_several_copies_and_overlapping_secrets() -> None:
    other = SECRET[:10] + "Different"
    text = f"{SECRET} and {other} and {SECRET[:9]}"
    assert SECRET[:8].lower() not in redact_text(text, [SECRET, other]).lower()
    assert redact_text(text, [SECRET, other]).count(REDACTED) == 3


def test_nothing_else_changes() -> None:
    text = "plain text without credentials, é, İstanbul, ß"
    assert redact_text(text, [SECRET]) == text


def test_errors_and_tool_values_never_carry_a_remembered_secret() -> None:
    remember_secrets([SECRET])
    error = DoigetError(
        ErrorCode.NETWORK_ERROR,
        f"<ERROR>API key invalid: {SECRET.lower()}</ERROR>",
        details={"echo": [SECRET[:10]]},
    )
    assert SECRET[:8].lower() not in (error.message + str(error) + str(error.details)).lower()
    value = redact_value({"results": [{"title": f"x {SECRET.upper()}"}], "n": 3})
    assert value == {"results": [{"title": f"x {REDACTED}"}], "n": 3}


@pytest.mark.parametrize(
    "logger_name",
    [
        "httpx",
        "httpcore.http11",
        "redis.connection",
        "qdrant_client",
        "trafilatura",
        "urllib3",
        "some.library.nobody.named",
    ],
)
@pytest.mark.parametrize("level", [logging.DEBUG, logging.INFO, logging.ERROR])
def test_no_library_logs_a_remembered_secret_at_any_level(
    logger_name: str, level: int, caplog: pytest.LogCaptureFixture
) -> None:
    remember_secrets([SECRET])
    caplog.set_level(logging.DEBUG)
    library = logging.getLogger(logger_name)
    library.log(level, "GET https://api.example.org/v1?key=%s&cx=1", SECRET.lower())
    try:
        raise ValueError(f"upstream said {SECRET}")
    except ValueError:
        library.exception("failed with %s", SECRET[:9])
    text = caplog.text.lower()
    assert SECRET[:8].lower() not in text
    assert REDACTED in caplog.text


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _b64url(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _percent_some(text: str, seed: int) -> str:
    """Some characters of ``text`` percent-encoded, each escape in a random hex case."""
    pick = random.Random(seed)
    return "".join(
        (f"%{ord(ch):02X}" if pick.random() < 0.5 else f"%{ord(ch):02x}")
        if pick.random() < 0.5
        else ch
        for ch in text
    )


ENCODED_ECHOES = {
    "cut-prefix": SECRET[3:],
    "cut-prefix-5": SECRET[5:],
    "cut-suffix": SECRET[:-4],
    "cut-both": SECRET[4:14],
    "every-char-percent-upper": "".join(f"%{b:02X}" for b in SECRET.encode()),
    "every-char-percent-lower": "".join(f"%{b:02x}" for b in SECRET.encode()),
    **{f"some-chars-percent-{seed}": _percent_some(SECRET, seed) for seed in range(4)},
    "percent-twice": quote(quote(SECRET, safe=""), safe=""),
    "percent-cut": quote(SECRET, safe="")[6:],
    "json-unicode-escapes": "".join(f"\\u{ord(ch):04x}" for ch in SECRET),
    "json-escaped-slash": SECRET.replace("/", "\\/"),
    "hex-lower": SECRET.encode().hex(),
    "hex-upper": SECRET.encode().hex().upper(),
    "hex-cut": SECRET.encode().hex()[5:29],
    "base64": _b64(SECRET),
    "base64-unpadded": _b64(SECRET).rstrip("="),
    "base64url": base64.urlsafe_b64encode(SECRET.encode()).decode(),
    "base64url-unpadded": _b64url(SECRET),
    "base64-cut": _b64(SECRET)[5:25],
    "base64-lower": _b64(SECRET).lower(),
    "base64-percent-encoded": quote(_b64(SECRET), safe=""),
    "basic-key-secret": _b64(f"{SECRET}:{OTHER}"),
    "basic-secret-key": _b64(f"{OTHER}:{SECRET}"),
    **{f"basic-user{n}-key": _b64(f"{'u' * n}:{SECRET}") for n in range(6)},
    **{f"basic-user{n}-key-url-cut": _b64url(f"{'u' * n}:{SECRET}")[4:28] for n in range(3)},
    **{f"base64-offset{n}-unpadded": _b64("x" * n + SECRET).rstrip("=") for n in range(3)},
}


@pytest.mark.parametrize("echo", ENCODED_ECHOES.values(), ids=ENCODED_ECHOES.keys())
@pytest.mark.parametrize(
    "frame",
    [
        "Forbidden for key {} (HTTP 403)",
        '{{"error": {{"message": "invalid credential \\"{}\\""}}}}',
        "GET https://api.example.org/v1/search?q=a%20b&k={}&cx=1",
        "Authorization: Basic {}",
        "{}",
    ],
    ids=["prose", "json", "url", "header", "alone"],
)
def test_every_encoding_and_cut_of_a_secret_is_redacted(echo: str, frame: str) -> None:
    text = frame.format(echo)
    assert redact_text(text, [SECRET, OTHER]) == frame.format(REDACTED)


@pytest.mark.parametrize("user", ["", "a", "ab", "abc", "alice", "ops-client"])
def test_hex_of_a_pair_leaves_only_the_user(user: str) -> None:
    echo = f"{user}:{SECRET}".encode().hex()
    shown = redact_text(f"auth {echo} refused", [SECRET])
    assert shown == f"auth {f'{user}:'.encode().hex()}{REDACTED} refused"


def test_secrets_inside_urls_and_json_keep_the_rest() -> None:
    url = "https://api.example.org/v1?" + urlencode({"q": "x y", "key": SECRET, "cx": "1"})
    assert redact_text(url, [SECRET]) == f"https://api.example.org/v1?q=x+y&key={REDACTED}&cx=1"
    document = json.dumps({"detail": f"key {SECRET} refused", "next": f"/v1?k={_b64url(SECRET)}"})
    assert json.loads(redact_text(document, [SECRET])) == {
        "detail": f"key {REDACTED} refused",
        "next": f"/v1?k={REDACTED}",
    }


def test_positions_hold_around_escapes_and_wide_characters() -> None:
    before = "é😀 %C3%A9 \\u00e9 a%20b "
    encoded = "%53%6b" + SECRET[2:]
    text = f"{before}{encoded} ¿{SECRET[5:]}? fin"
    assert redact_text(text, [SECRET]) == f"{before}{REDACTED} ¿{REDACTED}? fin"


@pytest.mark.parametrize(
    "text",
    [
        "plain text without credentials, é, İstanbul, ß, 10.1038/nature12373",
        "GET https://api.crossref.org/works?query=deep%20learning&mailto=a%40b.org",
        '{"snippet": "a \\"quoted\\" word, a\\/b, \\u00e9"}',
        hashlib.sha256(b"anything").hexdigest(),
        base64.b64encode(hashlib.sha256(b"anything").digest()).decode(),
        _b64("user:password-of-somebody-else"),
        SECRET[:7],
        _b64(SECRET[:5]),
    ],
)
def test_nothing_else_changes_with_many_secrets(text: str) -> None:
    many = [
        SECRET,
        OTHER,
        *(f"key{n:02d}-{hashlib.md5(bytes([n])).hexdigest()}" for n in range(10)),
    ]
    assert redact_text(text, many) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"Basic {_b64('k:pass1')}", f"Basic {REDACTED}"),
        (f"Basic {_b64('pass1:k')} ok", f"Basic {REDACTED} ok"),
        (f"pw {_b64('pass1')}", f"pw {REDACTED}"),
        ("hex 7061737331", f"hex {REDACTED}"),
        ("q=a%20k&x", f"q=a%20{REDACTED}&x"),
        ("v=%6B&x", f"v={REDACTED}&x"),
        ("pass12 and pass1x stay", "pass12 and pass1x stay"),
        (f"short {_b64('k')} stays", f"short {_b64('k')} stays"),
    ],
)
def test_short_secrets_and_their_encodings_count_only_as_whole_tokens(
    text: str, expected: str
) -> None:
    assert redact_text(text, ["k", "pass1"]) == expected


def test_the_matcher_is_built_once_per_set_of_secrets() -> None:
    remember_secrets([SECRET, OTHER])
    redact_known("warm up")
    built = _matcher.cache_info().misses
    for _ in range(50):
        redact_known(f"line with {SECRET[2:12]}")
    assert _matcher.cache_info().misses == built
    remember_secrets(["a-new-secret-value"])
    assert "a-new-secret" not in redact_known("it was a-new-secret-value")
    assert _matcher.cache_info().misses == built + 1


def test_a_logged_redirect_carries_no_encoded_key(caplog: pytest.LogCaptureFixture) -> None:
    remember_secrets([SECRET])
    caplog.set_level(logging.DEBUG)
    logging.getLogger("httpx").info(
        'HTTP Request: GET %s "HTTP/1.1 302 Found"',
        f"https://www.googleapis.com/customsearch/v1?k={_b64url(SECRET)}&q=x",
    )
    logging.getLogger("doiget.web").warning("brave said: key %s invalid", SECRET[3:].upper())
    assert caplog.text.count(REDACTED) == 2
    assert _b64url(SECRET)[:8] not in caplog.text
    assert SECRET[3:11].upper() not in caplog.text


# Strings that end or start where a neighbour's escape or token could seem to go on.
EDGES = ["%", "%2", "\\", "\\u00", "u0041", "2B", "Sk-Live", "_9fA3c7", "", "k", "K k"]


@pytest.mark.parametrize(
    "echo",
    [
        SECRET,
        SECRET.upper(),
        SECRET[:8],
        SECRET[-9:],
        "Sk-Live_9fA3c7QwErTy%2B%2F%3D",
        "Sk%2DLive%5F9fA3",
        "Sk-Live_9fA3c7QwErTy\\u002b\\/",
        base64.b64encode(f"user:{SECRET}".encode()).decode(),
        "k",
        "key=k&cx=1",
    ],
)
def test_a_value_is_redacted_as_each_of_its_strings_alone(echo: str) -> None:
    """Wherever a secret's copy sits in a value (among strings ending or starting with
    a piece of an escape or of the secret), each string reads as it does alone."""
    remember_secrets([SECRET, "k"])
    rng = random.Random(echo)
    for _ in range(20):
        strings = [rng.choice(EDGES) for _ in range(6)]
        strings.insert(rng.randrange(7), f"at {echo} end")
        value = {"a": strings[:3], "b": {"c": strings[3:5], "d": [strings[5:], 7, None]}}
        alone = [redact_known(text) for text in strings]
        expected = {"a": alone[:3], "b": {"c": alone[3:5], "d": [alone[5:], 7, None]}}
        assert redact_value(value) == expected


def test_a_secret_cut_across_two_strings_is_in_neither() -> None:
    """Two strings, each shorter than any counted piece, that together would spell a
    secret's piece, are left as they are; a value with no secret is given back as it is."""
    remember_secrets([SECRET, "k"])
    assert redact_value({"a": ["k", "b"], "c": "K"}) == {"a": [REDACTED, "b"], "c": REDACTED}
    value = {"parts": [SECRET[:7], SECRET[7:14]], "n": [1, 2.5, True, None]}
    assert redact_value(value) is value
    assert redact_value({"t": (SECRET[:7], "x")}) == {"t": [SECRET[:7], "x"]}
