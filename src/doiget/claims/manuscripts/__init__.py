"""Reading a manuscript's citations: where each stands, its sentence, the keys it cites,
and the bibliography that says what each key is."""
