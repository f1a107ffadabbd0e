"""Bibliographies in: a citation manager's export checked entry by entry and stored
under the real works, with the user's own citation keys kept."""
