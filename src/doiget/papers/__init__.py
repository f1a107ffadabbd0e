"""The papers core: store, provenance log, fetch orchestration, citation graph."""
