"""scrape_page's browser tier: headless Chromium behind doiget's own network guard."""
