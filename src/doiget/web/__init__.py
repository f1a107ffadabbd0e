"""The web toolset's core: search providers and their router, page scraping, the
shared cache and large-result artifacts (DESIGN §9).

Nothing here imports heavy libraries at module level: trafilatura, pypdfium2,
python-docx, redis and cryptography load on first use.
"""
