"""Citations from works: BibTeX and CSL-JSON."""
