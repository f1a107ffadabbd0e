"""Upstream sources: each talks to one upstream through its client, parsing into doiget.models."""
