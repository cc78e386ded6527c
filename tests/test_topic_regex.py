"""``groupcoord.topic_regex.TopicRegex``: KIP-848's ``SubscribedTopicRegex``."""

from __future__ import annotations

import pytest

from groupcoord.topic_regex import TopicRegex


def test_the_whole_name_must_match() -> None:
    regex = TopicRegex("a|b")
    assert regex.matches("a") and regex.matches("b")
    assert not regex.matches("ab")
    assert not TopicRegex("topic").matches("my-topic")
    assert TopicRegex("topic-.*").matches("topic-1")
    assert TopicRegex(".*").matches("__consumer_offsets")


def test_matching_keeps_the_order_and_the_objects() -> None:
    names = ["payments-1", "refunds-1", "orders-2", "orders", "orders-1"]
    matched = TopicRegex("(orders|payments)-.*").matching(iter(names))
    assert matched == ["payments-1", "orders-2", "orders-1"]
    assert matched[0] is names[0]
    assert TopicRegex("x").matching([]) == []


def test_pattern_and_repr() -> None:
    regex = TopicRegex(r"topic-\d+")
    assert regex.pattern == r"topic-\d+"
    assert repr(regex) == r"TopicRegex('topic-\\d+')"


def test_unicode_names() -> None:
    assert TopicRegex(r"\p{Greek}+").matches("αβγ")
    assert TopicRegex(r"\pL+-\d{2}").matches("Grüße-42")
    assert not TopicRegex(r"\d").matches("٣")  # RE2J's \d is ASCII


@pytest.mark.parametrize(("pattern", "description"), [
    ("(a", "missing closing )"),
    ("[a", "missing closing ]"),
    (r"(a)\1", "invalid escape sequence"),
    ("(?=a)", "invalid or unsupported Perl syntax"),
    ("a++", "invalid nested repetition operator"),
    ("a{1001}", "invalid repeat count"),
    (r"\pL{1000}", "expression too large"),
])
def test_an_invalid_pattern_raises_kafkas_message(pattern: str, description: str) -> None:
    with pytest.raises(ValueError) as raised:
        TopicRegex(pattern)
    assert str(raised.value) == (
        f"SubscribedTopicRegex `{pattern}` is not a valid regular expression: {description}.")


def test_names_must_be_strings() -> None:
    with pytest.raises(TypeError):
        TopicRegex("a").matching(["a", b"a"])  # type: ignore[list-item]
    with pytest.raises(UnicodeEncodeError):
        TopicRegex(".").matches("\ud800")

