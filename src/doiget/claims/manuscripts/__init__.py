"""Reading a manuscript's citations: where each stands, its sentence, the keys it cites,
and the bibliography that says what each key is."""

from doiget.claims.manuscripts.read import read_manuscript

__all__ = ["read_manuscript"]
