"""Zotero as doiget's library: read it, follow it (incremental sync), write verified works back.

Layers, bottom up: :mod:`.models` (typed views of Zotero's JSON), :mod:`.api` (the
documented protocol of the local API, the connector endpoints and the Web API, spoken
through doiget's network layer), :mod:`.sync` (Zotero items into doiget entries,
incrementally), :mod:`.writeback` (verified works, notes and tags out, approved first).
"""
