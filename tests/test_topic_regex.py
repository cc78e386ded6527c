"""``groupcoord.topic_regex.TopicRegex``: KIP-848's ``SubscribedTopicRegex``, and the same
patterns run through RE2J 1.8 (Kafka 4.3's) to compare which compile and what they match."""

from __future__ import annotations

import base64
import functools
import subprocess
import sys
from pathlib import Path

import pytest

from groupcoord.topic_regex import TopicRegex

sys.path.append(str(Path(__file__).with_name("server")))
from java_client import maven_classpath

RE2J = Path(__file__).with_name("re2j")


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


# Patterns a consumer might subscribe with, and the corners where RE2J's syntax and the regex
# crate's part ways; each is run against every name of NAMES.
PATTERNS = [
    "topic-.*", "(orders|payments)\\..+", "[a-z]+-\\d{2}", ".*", "^foo$", "foo.*bar", "a|b",
    "a|ab", "orders", "orders\\.v[0-9]+", "logs-\\d+", "logs-\\d{2,}", "(?i)orders.*",
    "(?i:FOO)bar", "[^_].*", "__.*", "(?!__).*", "\\w+", "\\w+\\.\\w+", "[\\w.-]+",
    "\\p{Greek}+", "\\pL+", "\\pL+-\\d{2}", "\\p{Lu}.*", "\\p{^Greek}+", "\\PL+", "[[:alpha:]]+",
    "[[:^alpha:]]+", "[[:word:]]+", "x*", "topic-\\d?", "(?U)a+", "a{2}", "a{,3}", "a{1,2",
    "a{01}", "\\Qx.y.z\\E", "\\Qa.b", "[a[b]", "[a-z&&b]+", "[+--]", "[--/]", "[]a]", "[^]a]",
    "\\<a", "\\12", "\\x41.*", "\\x{3b1}.*", "\\é", "\\λ", "caf.", "(?s).*", "\\bfoo\\b",
    "é\\b", "(?i)\\w", "(?i)k", "(?P<n>foo)(?<m>bar)", "(?P<1a>x)", "\\p{Any}+",
    "\\p{Common}+", "\\p{Arabic}+", "\\pC", "\\p{Cs}", "\\P{Cs}+", "(?m)^foo$", "\\Afoo\\z",
    "^*", "(?)foo", "(?i)", "()", "(|a)", "\\x{D800}", "[\\x{D7FF}-\\x{E000}]",
    # Invalid, each with RE2J's description.
    "(a", "a)", ")", "[a", "[]", "(a)\\1", "\\8", "(?=a)", "(?<=a)", "(?x)a", "(?u)a",
    "(?i-)a", "(?P=n)", "(?#c)", "(?", "(?P<n.x>a)", "(?<>x)", "(?P<a>x)(?P<a>y)", "a++",
    "a**", "a{2}{3}", "*", "a|*", "{1}", "a{1001}", "x{2,1}", "{1001}", "\\", "[z-a]", "[a--b]",
    "[[:foo:]]", "\\p{Foo}", "\\p{greek}", "\\p{Latn}", "\\p{javaLowerCase}", "\\p{IsAlphabetic}",
    "\\p{L&}", "\\p{Cn}", "\\p{LC}", "\\u0041", "\\Z", "\\E", "\\C", "\\G", "\\h",
    "\\x{110000}", "[\\b]", "[\\Q]\\E]", "[a-\\d]",
]

NAMES = [
    "", "a", "b", "ab", "aa", "aaa", "foo", "foobar", "FOObar", "foo-x-bar", "foo.bar", "orders",
    "ORDERS", "orders.v2", "orders.eu", "payments.us", "refunds.eu", "topic-", "topic-1",
    "topic-12", "my-topic", "logs-1", "logs-01", "logs-2024", "abc-12", "ABC-12",
    "__consumer_offsets", "_schemas", "x.y.z", "xay.z", "topic_A", "A", "K", "k", "\u212a",
    "a{,3}", "a{1,2", "a{01}", "<a", "[", "&", "]", ",", ".", "-", "/", "\n", "é", "λ", "αβγ",
    "Grüße-42", "café", "٣", "\u00a0", "\u0345", "\u0870", "\u08a1", "\u08be", "\u0378",
    "\u32ff", "\U0001f600",
]

# Where the engines differ by design (rust/src/topic_regex/mod.rs): pattern -> why. The test
# checks that each does differ, so the list cannot go stale.
DIFFERENCES = {
    "\\pL+": "U+0870, U+08A1 and U+08BE are letters since Unicode 7 to 14; RE2J 1.8's tables "
             "are Unicode 6.0's",
    "\\PL+": "the same letters, negated",
    "\\p{Common}+": "U+0663 is Common in RE2J's tables and Arabic in regex's; U+1F600 "
                     "(Unicode 6.1) and U+32FF (12.1) are later Common characters",
    "\\p{Arabic}+": "U+0663 again, and the Arabic letters added since Unicode 6.0",
    "\\pL{1000}": "RE2J compiles it; here it is over the size limit (64 MiB)",
    "a(?i)*": "RE2J repeats what came before the flags; here * has nothing to repeat",
}


@functools.cache
def re2j_classpath() -> str:
    """Fetch RE2J and compile Re2jMatch; the class path to run it."""
    return maven_classpath(RE2J, "re2j")


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def re2j_results(patterns: list[str], names: list[str]) -> list[str | list[bool]]:
    """Per pattern, RE2J's description of the error, or whether it matches each name."""
    names_field = " ".join(b64(name) for name in names)
    request = "".join(f"{b64(pattern)} {names_field}\n" for pattern in patterns)
    out = subprocess.run(["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                          "-cp", re2j_classpath(), "Re2jMatch"],
                         input=request, capture_output=True, text=True, check=True, timeout=120)
    results: list[str | list[bool]] = []
    for line in out.stdout.splitlines():
        kind, *fields = line.split(" ")
        if kind == "invalid":
            results.append(base64.b64decode(fields[0]).decode())
        else:
            results.append([field == "1" for field in fields])
    assert len(results) == len(patterns)
    return results


def our_results(pattern: str, names: list[str]) -> str | list[bool]:
    try:
        regex = TopicRegex(pattern)
    except ValueError as e:
        prefix = f"SubscribedTopicRegex `{pattern}` is not a valid regular expression: "
        message = str(e)
        assert message.startswith(prefix) and message.endswith(".")
        return message[len(prefix):-1]
    return [regex.matches(name) for name in names]


@pytest.mark.java
def test_against_re2j() -> None:
    patterns = PATTERNS + [p for p in DIFFERENCES if p not in PATTERNS]
    theirs = re2j_results(patterns, NAMES)
    agree: list[str] = []
    differ: dict[str, str] = {}
    for pattern, expected in zip(patterns, theirs):
        ours = our_results(pattern, NAMES)
        if ours == expected:
            agree.append(pattern)
        elif isinstance(ours, list) and isinstance(expected, list):
            differ[pattern] = ", ".join(f"{name!r}: RE2J {e}, ours {o}"
                                        for name, e, o in zip(NAMES, expected, ours) if e != o)
        else:
            differ[pattern] = f"RE2J {expected!r}, ours {ours!r}"
    assert {p: d for p, d in differ.items() if p not in DIFFERENCES} == {}
    assert [p for p in DIFFERENCES if p in agree] == [], "documented differences that agree"
    assert len(agree) >= 100
