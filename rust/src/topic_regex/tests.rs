//! Each expectation was checked against RE2J 1.8 (`Pattern.compile(p).matcher(name).matches()`
//! and `PatternSyntaxException.getDescription()`).

use super::re2j::description::*;
use super::*;

fn matches(pattern: &str, name: &str) -> bool {
    TopicRegex::compile(pattern)
        .unwrap_or_else(|e| panic!("{pattern}: {e}"))
        .is_match(name)
}

fn description(pattern: &str) -> String {
    match TopicRegex::compile(pattern) {
        Ok(_) => panic!("{pattern} compiled"),
        Err(Error::InvalidRegularExpression {
            pattern: p,
            description,
        }) => {
            assert_eq!(p, pattern);
            description
        }
        Err(other) => panic!("{pattern}: {other}"),
    }
}

#[test]
fn the_whole_name_must_match() {
    assert!(matches("topic-.*", "topic-a"));
    assert!(!matches("topic", "my-topic"));
    assert!(!matches("topic", "topic-a"));
    assert!(matches(".*", ""));
    assert!(matches(".*", "__consumer_offsets"));
    assert!(matches("foo.*bar", "foo-x-bar"));
    assert!(!matches("foo.*bar", "foo-x-bar-y"));
}

#[test]
fn alternation_is_anchored_as_a_whole() {
    for name in ["a", "b"] {
        assert!(matches("a|b", name));
    }
    assert!(!matches("a|b", "ab"));
    assert!(matches("a|ab", "ab"));
    assert!(matches("(orders|payments)\\..+", "payments.eu"));
    assert!(!matches("(orders|payments)\\..+", "refunds.eu"));
}

#[test]
fn anchors_inside_the_pattern() {
    assert!(matches("^foo$", "foo"));
    assert!(matches("^foo|bar$", "bar"));
    assert!(!matches("foo$|bar", "foo\n"));
    assert!(matches("(?m)^foo$", "foo"));
    assert!(matches(r"\Afoo\z", "foo"));
    assert!(matches("^*", ""));
}

#[test]
fn unicode_names() {
    assert!(matches(r"\p{Greek}+", "αβγ"));
    assert!(matches("caf.", "café"));
    assert!(matches(r"\pL+-\d{2}", "Grüße-42"));
    assert!(matches("(?i)STRASSE|É", "é"));
    assert!(matches("[^a]", "\u{1F600}"));
    assert!(
        !matches(r"\p{Greek}", "\u{345}"),
        "Script, not Script_Extensions"
    );
    assert!(matches(r"\pC", "\u{7}"));
    assert!(
        !matches(r"\pC", "\u{378}"),
        "unassigned: Cn, which RE2J's C leaves out"
    );
    assert!(!matches(r"\p{Cs}", ""));
    assert!(matches(r"\P{Cs}", "a"));
}

#[test]
fn perl_classes_are_ascii() {
    assert!(!matches(r"\d", "٣"));
    assert!(!matches(r"\w", "é"));
    assert!(!matches(r"\s", "\u{a0}"));
    assert!(matches(r"\D", "٣"));
    assert!(matches(r"[\d-z]+", "5-z"));
    assert!(!matches(r"[\d-z]", "y"));
    assert!(matches(r"(?i)\w", "\u{212A}"));
    assert!(matches(r"a\b", "a"));
    assert!(!matches(r"é\b", "é"), "é is no ASCII word character");
}

#[test]
fn re2j_literals() {
    assert!(matches(r"\Qa.b\E", "a.b"));
    assert!(!matches(r"\Qa.b\E", "axb"));
    assert!(matches(r"\Qa\E*", "aaa"));
    assert!(matches(r"\Qab", "ab"));
    assert!(matches("a{,3}", "a{,3}"));
    assert!(matches("a{1,2", "a{1,2"));
    assert!(!matches("a{01}", "a"));
    assert!(matches("}", "}"));
    assert!(matches(r"\<a", "<a"));
    assert!(matches("[a[b]", "["));
    assert!(matches("[a-z&&b]", "&"));
    assert!(matches("[]a]", "]"));
    assert!(matches("[^]a]", "b"));
    assert!(matches("[+--]", ","));
    assert!(matches("[--/]", "."));
    assert!(matches("[[:foo]", "f"));
    assert!(matches(r"\12", "\n"));
    assert!(matches(r"\400", "Ā"));
    assert!(matches(r"\x{1F600}", "\u{1F600}"));
    assert!(matches(r"\é", "é"));
    assert!(matches(r"\p{^Greek}", "a"));
    assert!(!matches(r"\P{^Greek}", "a"));
    assert!(!matches(r"\x{D800}", ""));
    assert!(matches(r"[\x{D7FF}-\x{E000}]", "\u{E000}"));
}

#[test]
fn flags() {
    assert!(matches("(?i)orders", "ORDERS"));
    assert!(matches("(?i:A)b", "ab"));
    assert!(!matches("(?i:A)b", "aB"));
    assert!(matches("(?)a", "a"));
    assert!(matches("(?i)", ""));
    assert!(matches("(?s).", "\n"));
    assert!(!matches(".", "\n"));
    assert!(matches("(?P<n>a)(?<m>b)", "ab"));
    assert!(matches("(?P<1a>x)", "x"));
}

#[test]
fn invalid_patterns_get_re2js_description() {
    for (pattern, expected) in [
        ("(a", MISSING_PAREN),
        ("(?:a", MISSING_PAREN),
        ("a)", UNEXPECTED_PAREN),
        (")", UNEXPECTED_PAREN),
        ("[a", MISSING_BRACKET),
        ("[]", MISSING_BRACKET),
        (r"(a)\1", INVALID_ESCAPE),
        (r"\8", INVALID_ESCAPE),
        ("(?=a)", INVALID_PERL_OP),
        ("(?!a)", INVALID_PERL_OP),
        ("(?<=a)", INVALID_NAMED_CAPTURE),
        ("(?x)a", INVALID_PERL_OP),
        ("(?u)a", INVALID_PERL_OP),
        ("(?i-)a", INVALID_PERL_OP),
        ("(?P=n)", INVALID_PERL_OP),
        ("(?#c)", INVALID_PERL_OP),
        ("(?", INVALID_PERL_OP),
        ("(?P<n.x>a)", INVALID_NAMED_CAPTURE),
        ("(?<>x)", INVALID_NAMED_CAPTURE),
        ("(?P<a>x)(?P<a>y)", DUPLICATE_NAME),
        ("a++", NESTED_REPEAT),
        ("a**", NESTED_REPEAT),
        ("a{2}{3}", NESTED_REPEAT),
        ("a*?*", NESTED_REPEAT),
        ("*", MISSING_REPEAT_ARGUMENT),
        ("a|*", MISSING_REPEAT_ARGUMENT),
        ("(*)", MISSING_REPEAT_ARGUMENT),
        ("{1}", MISSING_REPEAT_ARGUMENT),
        ("a{1001}", INVALID_REPEAT_SIZE),
        ("x{2,1}", INVALID_REPEAT_SIZE),
        ("x{2,1001}", INVALID_REPEAT_SIZE),
        ("\\", TRAILING_BACKSLASH),
        ("[z-a]", INVALID_CHAR_RANGE),
        ("[a--b]", INVALID_CHAR_RANGE),
        ("[[:foo:]]", INVALID_CHAR_RANGE),
        (r"\p{Foo}", INVALID_CHAR_RANGE),
        (r"\p{greek}", INVALID_CHAR_RANGE),
        (r"\p{Latn}", INVALID_CHAR_RANGE),
        (r"\p{javaLowerCase}", INVALID_CHAR_RANGE),
        (r"\p{IsAlphabetic}", INVALID_CHAR_RANGE),
        (r"\p", INVALID_CHAR_RANGE),
        (r"\u0041", INVALID_ESCAPE),
        (r"\Z", INVALID_ESCAPE),
        (r"\E", INVALID_ESCAPE),
        (r"\C", INVALID_ESCAPE),
        (r"\x{110000}", INVALID_ESCAPE),
        (r"\x4", INVALID_ESCAPE),
        (r"[\b]", INVALID_ESCAPE),
        (r"[\Q]\E]", INVALID_ESCAPE),
    ] {
        assert_eq!(description(pattern), expected, "{pattern}");
    }
}

#[test]
fn kafkas_message() {
    let err = TopicRegex::compile("(a").unwrap_err();
    assert_eq!(
        err.to_string(),
        "SubscribedTopicRegex `(a` is not a valid regular expression: missing closing )."
    );
}

#[test]
fn size_limits() {
    assert!(matches(r"\pL{100}", &"é".repeat(100)));
    assert!(matches(".{1000}", &"é".repeat(1000)));
    assert_eq!(description(r"\pL{1000}"), TOO_LARGE);
    assert_eq!(description("((a{1000}){1000}){1000}"), TOO_LARGE);
    assert_eq!(description(r"(\pL{1000}){100}"), TOO_LARGE);
}

#[test]
fn nesting_limit() {
    let deep = |n: usize| format!("{}a{}", "(".repeat(n), ")*".repeat(n));
    assert!(matches(&deep(re2j::MAX_DEPTH), "aaa"));
    assert_eq!(description(&deep(re2j::MAX_DEPTH + 1)), NESTING_DEPTH);
}

#[test]
fn matching_keeps_the_input_order() {
    let regex = TopicRegex::compile("(orders|payments)-.*").unwrap();
    let names = ["payments-1", "refunds-1", "orders-2", "orders", "orders-1"];
    assert_eq!(
        regex.matching(names.into_iter()),
        ["payments-1", "orders-2", "orders-1"]
    );
    assert_eq!(regex.pattern(), "(orders|payments)-.*");
}
