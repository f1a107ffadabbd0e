"""Web answers the end-to-end tests share: a Brave search answer and a long article."""

from __future__ import annotations

from typing import Any

BRAVE = ("api.search.brave.com", "/res/v1/web/search")
BRAVE_ANSWER: dict[str, Any] = {
    "web": {
        "results": [
            {
                "title": "Graphene review",
                "url": "https://www.nature.com/articles/graphene",
                "description": "Graphene conducts <strong>electricity</strong> well.",
            }
        ]
    }
}
# An article long enough (about 60 KB of text) to come back as a resource link.
LONG_PAGE = (
    "<html><head><title>A long essay</title></head><body><article><h1>A long essay</h1>"
    + "".join(
        f"<p>Paragraph {n} of a long essay about the history of measurement, with enough "
        "words in it to be kept by the extractor as real prose rather than boilerplate.</p>"
        for n in range(400)
    )
    + "</article></body></html>"
).encode()
