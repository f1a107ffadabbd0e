"""Replay upstream for tests: a local TLS server impersonating upstream hosts."""

from replay.server import (
    DEFAULT_HOSTS,
    FIXTURES,
    SHARED_ENCODER_CACHE,
    Recorded,
    ReplayUpstream,
    Reply,
)

__all__ = [
    "DEFAULT_HOSTS",
    "FIXTURES",
    "SHARED_ENCODER_CACHE",
    "Recorded",
    "ReplayUpstream",
    "Reply",
]
