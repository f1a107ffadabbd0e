"""forumSignals from a Reddit post's JSON-LD: the shapes pages use, and what is not a post."""

from __future__ import annotations

from typing import Any

import pytest

from doiget.web.scrape.forum import FEW_UPVOTES_NOTE, forum_signals, is_reddit

POST = "https://www.reddit.com/r/science/comments/abc123/title/"


def posting(**fields: Any) -> dict[str, Any]:
    return {"@context": "https://schema.org", "@type": "DiscussionForumPosting", **fields}


def counter(action: Any, count: Any) -> dict[str, Any]:
    return {"@type": "InteractionCounter", "interactionType": action, "userInteractionCount": count}


@pytest.mark.parametrize(
    "url",
    [
        POST,
        "https://old.reddit.com/r/x/comments/1/",
        "https://reddit.com/r/x",
        "http://np.reddit.com",
    ],
)
def test_reddit_hosts(url: str) -> None:
    assert is_reddit(url)


@pytest.mark.parametrize(
    "url", ["https://notreddit.com/r/x", "https://reddit.com.evil.example/r/x", "https://x.org"]
)
def test_other_hosts_are_not_reddit(url: str) -> None:
    assert not is_reddit(url)


def test_a_popular_post_has_counts_author_date_and_no_note() -> None:
    ld = [
        posting(
            datePublished="2025-01-02T03:04:05Z",
            author={"@type": "Person", "name": "u/someone"},
            interactionStatistic=[
                counter("https://schema.org/LikeAction", 1234),
                counter("http://schema.org/CommentAction", 56),
            ],
        )
    ]
    assert forum_signals(POST, ld) == {
        "platform": "reddit",
        "upvotes": 1234,
        "comments": 56,
        "datePublished": "2025-01-02T03:04:05Z",
        "authorName": "u/someone",
    }


@pytest.mark.parametrize("upvotes", [0, 1, 19])
def test_fewer_than_twenty_upvotes_carry_a_credibility_note(upvotes: int) -> None:
    ld = [posting(interactionStatistic=[counter("LikeAction", upvotes)], commentCount=2)]
    signals = forum_signals(POST, ld)
    assert signals is not None
    assert signals["upvotes"] == upvotes and signals["comments"] == 2
    assert signals["credibilityNote"] == FEW_UPVOTES_NOTE


def test_twenty_upvotes_carry_no_note() -> None:
    signals = forum_signals(POST, [posting(interactionStatistic=[counter("LikeAction", 20)])])
    assert signals is not None and "credibilityNote" not in signals
    assert signals["comments"] == 0


def test_counters_in_a_graph_with_typed_actions_strings_and_a_single_counter() -> None:
    ld = [
        {
            "@context": "https://schema.org",
            "@graph": [
                {"@type": "BreadcrumbList"},
                {
                    "@type": ["SocialMediaPosting"],
                    "interactionStatistic": counter({"@type": "VoteAction"}, "1,024"),
                    "author": [{"name": "first"}, {"name": "second"}],
                },
            ],
        }
    ]
    assert forum_signals(POST, ld) == {
        "platform": "reddit",
        "upvotes": 1024,
        "comments": 0,
        "authorName": "first",
    }


@pytest.mark.parametrize(
    "ld",
    [
        [],
        [{"@type": "WebSite", "name": "Reddit"}],
        [posting(commentCount=4)],  # no vote count declared: no signals invented
        [posting(interactionStatistic=[counter("LikeAction", -3)])],
        [posting(interactionStatistic=[counter("LikeAction", True)])],
        [posting(interactionStatistic=[counter("LikeAction", "many")])],
        [posting(interactionStatistic="not a list")],
    ],
)
def test_no_signals_without_a_post_that_declares_its_votes(ld: list[Any]) -> None:
    assert forum_signals(POST, ld) is None


def test_a_forum_post_elsewhere_has_no_reddit_signals() -> None:
    ld = [posting(interactionStatistic=[counter("LikeAction", 5)])]
    assert forum_signals("https://forum.example.org/t/1", ld) is None
