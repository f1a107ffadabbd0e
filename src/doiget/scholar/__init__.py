"""The scholar core: search and look up papers on arXiv, Semantic Scholar and PubMed."""
