"""scrape_page: page fetching, content extraction and the facts reported about a page."""
