//! KIP-848's `SubscribedTopicRegex`: a consumer subscribes to every topic whose whole name a
//! regular expression matches.
//!
//! Kafka's group coordinator compiles the expression with RE2J
//! (`com.google.re2j.Pattern.compile`; `GroupMetadataManager` answers one that does not compile
//! INVALID_REGULAR_EXPRESSION, through `Utils.throwIfRegularExpressionIsInvalid`) and
//! `TopicRegexResolver` keeps each topic, internal ones included, for which
//! `pattern.matcher(topic).matches()`: the whole name, not a part of it. [`TopicRegex`] does the
//! same with the `regex` crate, which shares RE2's syntax family and its linear-time matching:
//! the pattern is read as RE2J reads it ([`re2j::translate`]), then compiled anchored at both
//! ends, `^(?:pattern)$`, so that `a|b` matches `a` and `b` but not `ab`.
//!
//! # Differences from RE2J
//!
//! Every pattern RE2J 1.8 (Kafka 4.3's) compiles is read with RE2J's meaning, and every
//! pattern it refuses is refused with RE2J's description, except:
//!
//! - **Size.** A pattern whose compiled program exceeds [`SIZE_LIMIT`] is refused ("expression
//!   too large", RE2's words), such as `\pL{1000}`; RE2J has no such limit
//!   (`((a{1000}){1000}){1000}` runs its JVM out of heap). Groups nested deeper than [`re2j::MAX_DEPTH`] are refused ("expression nests
//!   too deeply"); RE2J has no limit there either.
//! - **Unicode tables.** `\pL`, `\p{Greek}`, `(?i)` case folding and the like follow the
//!   `regex` crate's Unicode tables (Unicode 16); RE2J 1.8's are Unicode 6's. Code points
//!   assigned since then match differently; the names accepted are RE2J's (its 36 general
//!   categories, its 96 scripts and `Any`).
//! - **Surrogates.** RE2J matches UTF-16 strings, which may hold lone surrogates; a Rust
//!   `str` cannot, so a pattern's surrogate code points (`\x{D800}`) match nothing.
//! - **Flags before a repetition.** RE2J applies an operator after `(?i)` to what came before
//!   the flags (`a(?i)*` is `a*`); here that operator has nothing to repeat and the pattern is
//!   refused ("missing argument to repetition operator").
//!
//! A topic name is at most 249 characters of `[a-zA-Z0-9._-]`, and for such names only the
//! size limits can tell the two engines apart.

pub mod re2j;

use regex::{Regex, RegexBuilder};

use crate::{Error, Result};

/// The largest compiled program accepted, in bytes (the `regex` crate's own default). It holds
/// `.{1000}` (1 MiB) or `\pL{100}` (8 MiB), but not `\pL{1000}` (64 MiB, and 0.4 s to compile),
/// which RE2J accepts: a topic name is at most 249 characters, and a client should not make
/// the coordinator hold more per expression.
pub const SIZE_LIMIT: usize = 10 << 20;

/// The lazy DFA's transition cache per matching thread, in bytes. When it fills, matching
/// goes on in the slower NFA simulation; no pattern is refused for it.
pub const DFA_SIZE_LIMIT: usize = 2 << 20;

/// A compiled `SubscribedTopicRegex`.
#[derive(Clone, Debug)]
pub struct TopicRegex {
    pattern: String,
    regex: Regex,
}

impl TopicRegex {
    /// Compiles `pattern` as RE2J would, or [`Error::InvalidRegularExpression`] with RE2J's
    /// description of what is wrong.
    pub fn compile(pattern: &str) -> Result<TopicRegex> {
        let invalid = |description: &str| Error::InvalidRegularExpression {
            pattern: pattern.to_owned(),
            description: description.to_owned(),
        };
        let translated = re2j::translate(pattern).map_err(invalid)?;
        let regex = RegexBuilder::new(&format!("^(?:{translated})$"))
            .size_limit(SIZE_LIMIT)
            .dfa_size_limit(DFA_SIZE_LIMIT)
            // The translation nests at most two levels per group of the pattern (a group and
            // a repetition), plus a class's brackets and the anchoring group.
            .nest_limit(2 * re2j::MAX_DEPTH as u32 + 8)
            .build()
            .map_err(|err| match err {
                regex::Error::CompiledTooBig(_) => invalid(re2j::description::TOO_LARGE),
                regex::Error::Syntax(message) if message.contains("nest limit") => {
                    invalid(re2j::description::NESTING_DEPTH)
                }
                other => invalid(&other.to_string()),
            })?;
        Ok(TopicRegex {
            pattern: pattern.to_owned(),
            regex,
        })
    }

    /// The pattern as the member sent it.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether the pattern matches the whole of `name` (RE2J's `Matcher.matches()`).
    pub fn is_match(&self, name: &str) -> bool {
        self.regex.is_match(name)
    }

    /// The names the pattern matches, in the order given.
    pub fn matching<'a>(&self, names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
        names.filter(|name| self.is_match(name)).collect()
    }
}

#[cfg(test)]
mod tests;
