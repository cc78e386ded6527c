//! RE2J's pattern language (`com.google.re2j.Parser`, Perl flags), rewritten into the `regex`
//! crate's.
//!
//! Both descend from RE2, but the same text does not always mean the same thing: `regex` reads
//! `\d`, `\w`, `\s` and `\b` over Unicode where RE2J reads them over ASCII; `{` that starts no
//! repetition, `[` inside a class and `\<` are literal to RE2J and syntax to `regex`; RE2J has
//! `\Q...\E`, octal escapes and `\p{^Name}`, and refuses the flags `x`, `u` and `R`. Rather
//! than accept `regex`'s reading, [`translate`] reads the pattern as RE2J's parser does, raising
//! the same errors in the same order, and writes each piece out in a form `regex` can only read
//! one way: literals as escapes, classes bracketed, groups non-capturing.

use std::collections::HashSet;
use std::fmt::Write;

/// RE2J's `PatternSyntaxException.getDescription()` of each error [`translate`] raises.
pub mod description {
    pub const INVALID_ESCAPE: &str = "invalid escape sequence";
    pub const INVALID_CHAR_RANGE: &str = "invalid character class range";
    pub const MISSING_BRACKET: &str = "missing closing ]";
    pub const MISSING_PAREN: &str = "missing closing )";
    /// RE2J 1.8's words for a `)` that closes no group.
    pub const UNEXPECTED_PAREN: &str = "regexp/syntax: internal error";
    pub const INVALID_NAMED_CAPTURE: &str = "invalid named capture";
    pub const DUPLICATE_NAME: &str = "duplicate capture group name";
    pub const INVALID_PERL_OP: &str = "invalid or unsupported Perl syntax";
    pub const NESTED_REPEAT: &str = "invalid nested repetition operator";
    pub const INVALID_REPEAT_SIZE: &str = "invalid repeat count";
    pub const MISSING_REPEAT_ARGUMENT: &str = "missing argument to repetition operator";
    pub const TRAILING_BACKSLASH: &str = "trailing backslash at end of expression";
    /// RE2's words for its own nesting limit; RE2J 1.8 has none.
    pub const NESTING_DEPTH: &str = "expression nests too deeply";
    /// RE2's words for a program over its memory budget; RE2J 1.8 has none.
    pub const TOO_LARGE: &str = "expression too large";
}

use description::*;

/// RE2J's largest count in `{n,m}`.
pub const MAX_REPEAT: u32 = 1000;

/// The deepest nesting of groups accepted: RE2's limit (RE2J has none, and recurses).
pub const MAX_DEPTH: usize = 1000;

/// A class that matches nothing: what RE2J's surrogate code points become, as a `str` holds
/// none.
const EMPTY_CLASS: &str = r"[^\x00-\x{10FFFF}]";

/// RE2J 1.8's general categories (`UnicodeTables.CATEGORIES`), sorted.
const CATEGORIES: [&str; 36] = [
    "C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N",
    "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So",
    "Z", "Zl", "Zp", "Zs",
];

/// RE2J 1.8's scripts (`UnicodeTables.SCRIPTS`), sorted.
#[rustfmt::skip]
const SCRIPTS: [&str; 96] = [
    "Arabic", "Armenian", "Avestan", "Balinese", "Bamum", "Batak", "Bengali", "Bopomofo", "Brahmi",
    "Braille", "Buginese", "Buhid", "Canadian_Aboriginal", "Carian", "Cham", "Cherokee", "Common",
    "Coptic", "Cuneiform", "Cypriot", "Cyrillic", "Deseret", "Devanagari", "Egyptian_Hieroglyphs",
    "Ethiopic", "Georgian", "Glagolitic", "Gothic", "Greek", "Gujarati", "Gurmukhi", "Han",
    "Hangul", "Hanunoo", "Hebrew", "Hiragana", "Imperial_Aramaic", "Inherited",
    "Inscriptional_Pahlavi", "Inscriptional_Parthian", "Javanese", "Kaithi", "Kannada", "Katakana",
    "Kayah_Li", "Kharoshthi", "Khmer", "Lao", "Latin", "Lepcha", "Limbu", "Linear_B", "Lisu",
    "Lycian", "Lydian", "Malayalam", "Mandaic", "Meetei_Mayek", "Mongolian", "Myanmar",
    "New_Tai_Lue", "Nko", "Ogham", "Ol_Chiki", "Old_Italic", "Old_Persian", "Old_South_Arabian",
    "Old_Turkic", "Oriya", "Osmanya", "Phags_Pa", "Phoenician", "Rejang", "Runic", "Samaritan",
    "Saurashtra", "Shavian", "Sinhala", "Sundanese", "Syloti_Nagri", "Syriac", "Tagalog",
    "Tagbanwa", "Tai_Le", "Tai_Tham", "Tai_Viet", "Tamil", "Telugu", "Thaana", "Thai", "Tibetan",
    "Tifinagh", "Ugaritic", "Unknown", "Vai", "Yi",
];

/// RE2J's POSIX classes (`[:name:]`, each also as `[:^name:]`), sorted.
const POSIX_CLASSES: [&str; 14] = [
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
    "space", "upper", "word", "xdigit",
];

/// `pattern`, read as RE2J reads it, written in the `regex` crate's syntax; or RE2J's
/// description of what is wrong with it.
pub fn translate(pattern: &str) -> Result<String, &'static str> {
    Translator {
        chars: pattern.chars().collect(),
        pos: 0,
        out: String::with_capacity(pattern.len() * 2),
        depth: 0,
        operand: false,
        after_repeat: false,
        names: HashSet::new(),
    }
    .run()
}

struct Translator {
    chars: Vec<char>,
    pos: usize,
    out: String,
    /// Groups open.
    depth: usize,
    /// Whether a repetition operator here would have something to repeat.
    operand: bool,
    /// Whether the last piece was a repetition (RE2J refuses `a**`, `a{2}{3}`, `a++`).
    after_repeat: bool,
    /// Capture group names seen (the groups are written non-capturing, so `regex` never sees
    /// the names: RE2J allows some that `regex` does not, such as `1a`).
    names: HashSet<String>,
}

impl Translator {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn looking_at(&self, text: &str) -> bool {
        let mut at = self.pos;
        text.chars().all(|c| {
            let same = self.chars.get(at) == Some(&c);
            at += 1;
            same
        })
    }

    fn run(mut self) -> Result<String, &'static str> {
        while let Some(c) = self.next() {
            let after_repeat = std::mem::take(&mut self.after_repeat);
            match c {
                '*' | '+' | '?' => self.repeat(c.to_string(), after_repeat)?,
                '{' => match self.counted_repeat()? {
                    Some(op) => self.repeat(op, after_repeat)?,
                    None => self.literal(u32::from('{')),
                },
                '(' => self.open_group()?,
                ')' => {
                    if self.depth == 0 {
                        return Err(UNEXPECTED_PAREN);
                    }
                    self.depth -= 1;
                    self.out.push(')');
                    self.operand = true;
                }
                '|' => {
                    self.out.push('|');
                    self.operand = false;
                }
                // Grouped, so that `regex` repeats them as RE2J does (`^*`).
                '^' | '$' => self.atom(&format!("(?:{c})")),
                '.' => self.atom("."),
                '[' => {
                    let class = self.class()?;
                    self.atom(&class);
                }
                '\\' => self.escape()?,
                c => self.literal(u32::from(c)),
            }
        }
        if self.depth > 0 {
            return Err(MISSING_PAREN);
        }
        Ok(self.out)
    }

    fn atom(&mut self, text: &str) {
        self.out.push_str(text);
        self.operand = true;
    }

    fn literal(&mut self, code_point: u32) {
        match char::from_u32(code_point) {
            Some(c) => {
                let mut buf = [0; 4];
                let escaped = regex::escape(c.encode_utf8(&mut buf));
                self.atom(&escaped);
            }
            None => self.atom(EMPTY_CLASS),
        }
    }

    fn repeat(&mut self, op: String, after_repeat: bool) -> Result<(), &'static str> {
        if after_repeat {
            return Err(NESTED_REPEAT);
        }
        if !self.operand {
            return Err(MISSING_REPEAT_ARGUMENT);
        }
        self.out.push_str(&op);
        if self.peek() == Some('?') {
            self.pos += 1;
            self.out.push('?');
        }
        self.after_repeat = true;
        Ok(())
    }

    /// After `{`: `{n}`, `{n,}` or `{n,m}` in `regex`'s syntax, or None if the text is none
    /// of those (RE2J then reads `{` as a literal). Counts with a leading zero are no counts.
    fn counted_repeat(&mut self) -> Result<Option<String>, &'static str> {
        let start = self.pos;
        let Some(min) = self.count() else {
            self.pos = start;
            return Ok(None);
        };
        let comma = self.peek() == Some(',');
        let mut max = Some(min);
        if comma {
            self.pos += 1;
            max = None;
            if self.peek() != Some('}') {
                let Some(count) = self.count() else {
                    self.pos = start;
                    return Ok(None);
                };
                max = Some(count);
            }
        }
        if self.next() != Some('}') {
            self.pos = start;
            return Ok(None);
        }
        let limit = u64::from(MAX_REPEAT);
        if min > limit || max.is_some_and(|max| max > limit || max < min) {
            return Err(INVALID_REPEAT_SIZE);
        }
        Ok(Some(match (comma, max) {
            (false, _) => format!("{{{min}}}"),
            (true, None) => format!("{{{min},}}"),
            (true, Some(max)) => format!("{{{min},{max}}}"),
        }))
    }

    fn count(&mut self) -> Option<u64> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let digits = &self.chars[start..self.pos];
        if digits.is_empty() || (digits.len() > 1 && digits[0] == '0') {
            return None;
        }
        Some(digits.iter().fold(0u64, |n, d| {
            n.saturating_mul(10)
                .saturating_add(u64::from(*d as u32 - '0' as u32))
        }))
    }

    /// After `(`: a group, a named group, or flags (`(?i)`, `(?i-s:...)`).
    fn open_group(&mut self) -> Result<(), &'static str> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(NESTING_DEPTH);
        }
        self.operand = false;
        if self.peek() != Some('?') {
            self.out.push_str("(?:");
            return Ok(());
        }
        self.pos += 1;
        if self.looking_at("P<") || self.looking_at("<") {
            self.pos += if self.peek() == Some('P') { 2 } else { 1 };
            let end = self.chars[self.pos..]
                .iter()
                .position(|&c| c == '>')
                .ok_or(INVALID_NAMED_CAPTURE)?;
            let name: String = self.chars[self.pos..self.pos + end].iter().collect();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(INVALID_NAMED_CAPTURE);
            }
            if !self.names.insert(name) {
                return Err(DUPLICATE_NAME);
            }
            self.pos += end + 1;
            self.out.push_str("(?:");
            return Ok(());
        }
        let mut flags = String::new();
        let mut negated = false;
        let mut saw_flag = false;
        loop {
            match self.next().ok_or(INVALID_PERL_OP)? {
                c @ ('i' | 'm' | 's' | 'U') => {
                    flags.push(c);
                    saw_flag = true;
                }
                '-' if !negated => {
                    flags.push('-');
                    negated = true;
                    saw_flag = false;
                }
                c @ (':' | ')') if saw_flag || !negated => {
                    if c == ':' {
                        write!(self.out, "(?{flags}:").unwrap();
                    } else {
                        self.depth -= 1;
                        if !flags.is_empty() {
                            write!(self.out, "(?{flags})").unwrap();
                        }
                    }
                    return Ok(());
                }
                _ => return Err(INVALID_PERL_OP),
            }
        }
    }

    /// After `\` outside a class.
    fn escape(&mut self) -> Result<(), &'static str> {
        let c = self.next().ok_or(TRAILING_BACKSLASH)?;
        match c {
            'A' => self.atom(r"(?:\A)"),
            'z' => self.atom(r"(?:\z)"),
            'b' => self.atom(r"(?-u:\b)"),
            'B' => self.atom(r"(?-u:\B)"),
            'Q' => {
                while self.peek().is_some() && !self.looking_at(r"\E") {
                    let c = self.next().unwrap();
                    self.literal(u32::from(c));
                }
                if self.looking_at(r"\E") {
                    self.pos += 2;
                }
            }
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => self.atom(perl_class(c)),
            'p' | 'P' => {
                let class = self.unicode_class(c == 'P')?;
                self.atom(&class);
            }
            c => {
                let code_point = self.escaped_char(c)?;
                self.literal(code_point);
            }
        }
        Ok(())
    }

    /// The code point of the escape `\c...` (RE2J's `parseEscape`), `c` already read.
    fn escaped_char(&mut self, c: char) -> Result<u32, &'static str> {
        let octal = |c: Option<char>| c.and_then(|c| c.to_digit(8));
        match c {
            // `\1`..`\7` alone would be backreferences, which RE2J does not have.
            '1'..='7' if octal(self.peek()).is_none() => Err(INVALID_ESCAPE),
            '0'..='7' => {
                let mut value = c.to_digit(8).unwrap();
                for _ in 1..3 {
                    let Some(digit) = octal(self.peek()) else {
                        break;
                    };
                    value = value * 8 + digit;
                    self.pos += 1;
                }
                Ok(value)
            }
            'x' => self.hex_escape(),
            'a' => Ok(0x07),
            'f' => Ok(0x0C),
            'n' => Ok(0x0A),
            'r' => Ok(0x0D),
            't' => Ok(0x09),
            'v' => Ok(0x0B),
            c if !c.is_ascii_alphanumeric() => Ok(u32::from(c)),
            _ => Err(INVALID_ESCAPE),
        }
    }

    /// After `\x`: two hex digits or `{hex}`, at most U+10FFFF.
    fn hex_escape(&mut self) -> Result<u32, &'static str> {
        let hex = |c: Option<char>| c.and_then(|c| c.to_digit(16));
        if self.peek() != Some('{') {
            let (Some(high), Some(low)) = (hex(self.peek()), hex(self.peek_at(1))) else {
                return Err(INVALID_ESCAPE);
            };
            self.pos += 2;
            return Ok(high * 16 + low);
        }
        self.pos += 1;
        let mut value = 0u32;
        let mut digits = 0;
        while let Some(digit) = hex(self.peek()) {
            value = value.saturating_mul(16).saturating_add(digit);
            digits += 1;
            self.pos += 1;
        }
        if digits == 0 || self.next() != Some('}') || value > 0x10FFFF {
            return Err(INVALID_ESCAPE);
        }
        Ok(value)
    }

    /// After `\p` or `\P`: `\pL`, `\p{Name}` or `\p{^Name}`, as a bracketed class.
    fn unicode_class(&mut self, negated: bool) -> Result<String, &'static str> {
        let name: String = match self.next().ok_or(INVALID_CHAR_RANGE)? {
            '{' => {
                let end = self.chars[self.pos..]
                    .iter()
                    .position(|&c| c == '}')
                    .ok_or(INVALID_CHAR_RANGE)?;
                let name = self.chars[self.pos..self.pos + end].iter().collect();
                self.pos += end + 1;
                name
            }
            c => c.to_string(),
        };
        let (negated, name) = match name.strip_prefix('^') {
            Some(rest) => (!negated, rest),
            None => (negated, name.as_str()),
        };
        let set = if name == "Any" {
            r"\p{Any}".to_owned()
        } else if name == "C" {
            // RE2J's C is its tables' Cc, Cf, Co and Cs; `regex`'s also has the unassigned Cn.
            r"\p{gc=Cc}\p{gc=Cf}\p{gc=Co}".to_owned()
        } else if name == "Cs" {
            // Surrogates, which no `str` holds (and `regex` has no name for).
            EMPTY_CLASS.to_owned()
        } else if CATEGORIES.binary_search(&name).is_ok() {
            format!(r"\p{{gc={name}}}")
        } else if SCRIPTS.binary_search(&name).is_ok() {
            // `sc=`: the Script property, as RE2J's tables have it (a bare `\p{Greek}` is
            // Script_Extensions to `regex`).
            format!(r"\p{{sc={name}}}")
        } else {
            return Err(INVALID_CHAR_RANGE);
        };
        Ok(format!("[{}{set}]", if negated { "^" } else { "" }))
    }

    /// After `[`: the class as `regex` reads it, every member written unambiguously.
    fn class(&mut self) -> Result<String, &'static str> {
        let mut out = String::from("[");
        if self.peek() == Some('^') {
            self.pos += 1;
            out.push('^');
        }
        let mut first = true;
        loop {
            let c = self.peek().ok_or(MISSING_BRACKET)?;
            if c == ']' && !first {
                self.pos += 1;
                break;
            }
            first = false;
            if self.looking_at("[:") {
                if let Some(end) = self.find(":]", self.pos + 2) {
                    let name: String = self.chars[self.pos + 2..end].iter().collect();
                    let known = name.strip_prefix('^').unwrap_or(&name);
                    if POSIX_CLASSES.binary_search(&known).is_err() {
                        return Err(INVALID_CHAR_RANGE);
                    }
                    write!(out, "[[:{name}:]]").unwrap();
                    self.pos = end + 2;
                    continue;
                }
            }
            if c == '\\' {
                match self.peek_at(1) {
                    Some(perl @ ('d' | 'D' | 's' | 'S' | 'w' | 'W')) => {
                        self.pos += 2;
                        out.push_str(perl_class(perl));
                        continue;
                    }
                    Some(p @ ('p' | 'P')) => {
                        self.pos += 2;
                        out.push_str(&self.unicode_class(p == 'P')?);
                        continue;
                    }
                    _ => {}
                }
            }
            let lo = self.class_char()?;
            let mut hi = lo;
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                self.pos += 1;
                hi = self.class_char()?;
                if hi < lo {
                    return Err(INVALID_CHAR_RANGE);
                }
            }
            push_range(&mut out, lo, hi);
        }
        out.push(']');
        Ok(out)
    }

    /// One character of a class, escaped or not.
    fn class_char(&mut self) -> Result<u32, &'static str> {
        match self.next().ok_or(MISSING_BRACKET)? {
            '\\' => {
                let c = self.next().ok_or(TRAILING_BACKSLASH)?;
                self.escaped_char(c)
            }
            c => Ok(u32::from(c)),
        }
    }

    /// Where `text` next occurs from `from` on (RE2J looks for a POSIX class's `:]` through
    /// the rest of the pattern).
    fn find(&self, text: &str, from: usize) -> Option<usize> {
        let text: Vec<char> = text.chars().collect();
        self.chars
            .get(from..)?
            .windows(text.len())
            .position(|w| w == text.as_slice())
            .map(|at| from + at)
    }
}

/// RE2J's Perl classes: ASCII only.
fn perl_class(c: char) -> &'static str {
    match c {
        'd' => "[0-9]",
        'D' => "[^0-9]",
        's' => r"[\t\n\f\r ]",
        'S' => r"[^\t\n\f\r ]",
        'w' => "[0-9A-Za-z_]",
        'W' => "[^0-9A-Za-z_]",
        _ => unreachable!("not a Perl class: {c}"),
    }
}

/// `lo-hi` as a class member, without the surrogates (which no `str` holds and `regex` cannot
/// name).
fn push_range(out: &mut String, lo: u32, hi: u32) {
    const SURROGATES: std::ops::RangeInclusive<u32> = 0xD800..=0xDFFF;
    let lo = if SURROGATES.contains(&lo) { 0xE000 } else { lo };
    let hi = if SURROGATES.contains(&hi) { 0xD7FF } else { hi };
    if lo > hi {
        out.push_str(EMPTY_CLASS);
    } else if lo == hi {
        write!(out, r"\x{{{lo:X}}}").unwrap();
    } else {
        write!(out, r"\x{{{lo:X}}}-\x{{{hi:X}}}").unwrap();
    }
}
