"""Passage index backends behind one interface: embedded SQLite, or a Qdrant server."""
