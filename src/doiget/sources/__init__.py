"""Upstream sources: each talks to one upstream through its net client and parses into doiget.models."""
