"""Upstream declarations and their registry (see :mod:`doiget.upstreams.declaration`)."""

from __future__ import annotations

from doiget.upstreams.declaration import (
    Carrier,
    Gate,
    Redaction,
    Role,
    Scheme,
    Setting,
    Upstream,
    agree_var,
    key_var,
)
from doiget.upstreams.registry import all_upstreams, by_preference, by_role, find, get, register

__all__ = [
    "Carrier",
    "Gate",
    "Redaction",
    "Role",
    "Scheme",
    "Setting",
    "Upstream",
    "agree_var",
    "all_upstreams",
    "by_preference",
    "by_role",
    "find",
    "get",
    "key_var",
    "register",
]
