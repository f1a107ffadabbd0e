"""One redactor for every text: case-insensitive, percent-encoded and partial copies
of a configured secret never show in errors, tool results or any library's logs."""

from __future__ import annotations

import logging

import pytest

from doiget.errors import DoigetError, ErrorCode
from doiget.redaction import REDACTED, redact_text, redact_value, remember_secrets

SECRET = "Sk-Live_9fA3c7QwErTy+/="


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
