"""The library toolset's core: projects, ingestion, embeddings and the passage index."""
