"""Reading documents: a PDF's text lines with pages, its sections, its sentences and its
reference list. Below every core that reads documents (library, reading, verification,
adding, claims), so none of them reaches into a sibling for it."""
