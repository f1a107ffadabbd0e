"""forumSignals: a Reddit post's engagement, read from the JSON-LD the page embeds.

Reddit describes a post as a schema.org ``DiscussionForumPosting`` (older pages:
``SocialMediaPosting``) whose ``interactionStatistic`` holds ``InteractionCounter``s:
a ``LikeAction`` (or ``VoteAction``) count is the post's upvotes, a ``CommentAction``
count its comments (``commentCount`` when no counter says). The counts are what the
page declares about itself: a signal of attention, never of truth.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final
from urllib.parse import urlsplit

# Below this many upvotes a post has had little community scrutiny.
FEW_UPVOTES: Final = 20
_POST_TYPES: Final = frozenset({"discussionforumposting", "socialmediaposting"})
_UPVOTE_ACTIONS: Final = frozenset({"likeaction", "voteaction", "upvoteaction"})
_COMMENT_ACTIONS: Final = frozenset({"commentaction", "replyaction"})
FEW_UPVOTES_NOTE: Final = (
    f"Fewer than {FEW_UPVOTES} upvotes: little community scrutiny, and a count this small "
    "is easy to manipulate. Treat the post as one person's account."
)


def is_reddit(url: str) -> bool:
    """Whether ``url`` is on reddit.com (www., old., new. and other subdomains)."""
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    return host == "reddit.com" or host.endswith(".reddit.com")


def _nodes(value: Any) -> Iterator[dict[str, Any]]:
    """Every JSON-LD object in ``value``: lists and ``@graph`` arrays walked."""
    if isinstance(value, list):
        for item in value:
            yield from _nodes(item)
    elif isinstance(value, dict):
        yield value
        yield from _nodes(value.get("@graph"))


def _type_names(value: Any) -> set[str]:
    """The lower-case local names of a ``@type`` / ``interactionType`` value: a string,
    a list of them, an IRI (``https://schema.org/LikeAction``) or an object with one."""
    if isinstance(value, list):
        return set().union(*(_type_names(item) for item in value)) if value else set()
    if isinstance(value, dict):
        return _type_names(value.get("@type") or value.get("@id"))
    if isinstance(value, str):
        return {value.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].lower()}
    return set()


def _count(value: Any) -> int | None:
    """A non-negative whole count from a number or a numeric string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value >= 0:
        return int(value)
    if isinstance(value, str) and value.strip().replace(",", "").isdigit():
        return int(value.strip().replace(",", ""))
    return None


def _counter(post: dict[str, Any], actions: frozenset[str]) -> int | None:
    statistics = post.get("interactionStatistic")
    for counter in _nodes(statistics):
        if _type_names(counter.get("interactionType")) & actions:
            count = _count(counter.get("userInteractionCount"))
            if count is not None:
                return count
    return None


def _author(value: Any) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):
        value = value.get("name") or value.get("alternateName")
    return value.strip() if isinstance(value, str) and value.strip() else None


def forum_signals(url: str, json_ld: list[Any]) -> dict[str, Any] | None:
    """The ForumSignals of a Reddit post page, or None (not Reddit, or no post in its
    JSON-LD that declares a vote count)."""
    if not is_reddit(url):
        return None
    for node in _nodes(json_ld):
        if not _type_names(node.get("@type")) & _POST_TYPES:
            continue
        upvotes = _counter(node, _UPVOTE_ACTIONS)
        if upvotes is None:
            continue
        comments = _counter(node, _COMMENT_ACTIONS)
        if comments is None:
            comments = _count(node.get("commentCount")) or 0
        signals: dict[str, Any] = {"platform": "reddit", "upvotes": upvotes, "comments": comments}
        published = node.get("datePublished")
        if isinstance(published, str) and published.strip():
            signals["datePublished"] = published.strip()
        author = _author(node.get("author"))
        if author is not None:
            signals["authorName"] = author
        if upvotes < FEW_UPVOTES:
            signals["credibilityNote"] = FEW_UPVOTES_NOTE
        return signals
    return None
