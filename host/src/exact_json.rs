//! Reads a create body the way the form must show it: from its bytes, not from a parsed value.
//!
//! A parsed `serde_json::Value` keeps one of two duplicate keys, turns `5e2` into `500.0` and
//! `\u0041` into `A`: the person would approve something other than the bytes Fabric receives.
//! So the host refuses what it cannot show exactly and shows the rest as sent:
//! - a key twice in one object, compared after decoding escapes (which duplicate a JSON parser
//!   keeps differs between parsers, and Fabric's is not ours);
//! - a number other than a plain integer within +/-(2^53 - 1): every number Fabric's create
//!   bodies carry (bandwidths, VLAN tags, ASNs) is one, and refusing the rest is simpler to trust
//!   than showing `1e2` and asking the person to know what Jackson makes of it;
//! - an escape that is no character (a lone surrogate).
//!
//! Keys and strings are shown as their literal text, escapes and all; characters a person cannot
//! see (controls, Unicode format characters, separators, fillers) become visible `\u{…}`.

use std::borrow::Cow;
use std::collections::HashSet;

/// The largest integer the form shows: beyond it, JSON parsers disagree on the value.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;
/// Deeper bodies are refused (Fabric's create bodies nest about six levels).
const MAX_DEPTH: usize = 32;
/// Members of one object compared for duplicates one by one; a larger object gets a set (a
/// hostile body of many keys must not cost their square).
const SCANNED_MEMBERS: usize = 8;

/// Why a create body cannot be shown to a person as the bytes Fabric would receive.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error("the create body is not a JSON object")]
    NotAnObject,
    #[error("the create body has text after its JSON object (at byte {at})")]
    TextAfter { at: usize },
    #[error("the create body is not JSON the form can show: {what} at byte {at}")]
    Syntax { what: String, at: usize },
    #[error("the create body nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
    #[error(
        "the create body has the key {key} twice in `{object}` (compared after decoding escapes); which one Fabric \
         would keep cannot be shown, so it is not put before a person"
    )]
    KeyTwice { key: String, object: String },
    #[error(
        "the create body has the number {literal} at `{at}`: the form shows only plain integers within \
         +/-{MAX_SAFE_INTEGER} (no fraction, exponent, leading zero or -0), so that what the person reads is the \
         value Fabric receives"
    )]
    NotAPlainInteger { literal: String, at: String },
}

impl From<Unreadable> for String {
    fn from(e: Unreadable) -> String {
        e.to_string()
    }
}

/// A body that passed [`parse`], borrowed from its bytes: only what the form can show exactly
/// (no duplicate key, only plain safe integers), members in the order of the bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum Node<'a> {
    Object(Vec<Member<'a>>),
    Array(Vec<Node<'a>>),
    /// Its literal (quotes and escapes as sent) and its value.
    String {
        literal: &'a str,
        value: Cow<'a, str>,
    },
    /// Its literal as sent and its value.
    Integer {
        literal: &'a str,
        value: i64,
    },
    Bool(bool),
    Null,
}

/// One member of an object: its key's literal (for the form) and decoded (for lookups).
#[derive(Debug, PartialEq, Eq)]
pub struct Member<'a> {
    pub(crate) literal: &'a str,
    pub key: Cow<'a, str>,
    pub value: Node<'a>,
}

/// What a lookup finds where there is nothing.
static ABSENT: Node<'static> = Node::Null;

impl<'a> Node<'a> {
    /// The same reading as a JSON value, for code that reads `serde_json` (the plan, the member
    /// types): built from this tree rather than by parsing the bytes again, so every reader of a
    /// create sees the one reading the form shows.
    pub(crate) fn to_value(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Node::Object(members) => {
                Value::Object(members.iter().map(|m| (m.key.to_string(), m.value.to_value())).collect())
            }
            Node::Array(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Node::String { value, .. } => Value::String(value.to_string()),
            Node::Integer { value, .. } => Value::from(*value),
            Node::Bool(b) => Value::Bool(*b),
            Node::Null => Value::Null,
        }
    }

    /// The member `key` of an object (null when absent or when this is no object).
    pub(crate) fn get(&self, key: &str) -> &Node<'a> {
        self.member(key).unwrap_or(&ABSENT)
    }

    /// Whether this is an object with a member `key` (even one that is null).
    pub(crate) fn has(&self, key: &str) -> bool {
        self.member(key).is_some()
    }

    fn member(&self, key: &str) -> Option<&Node<'a>> {
        match self {
            Node::Object(members) => members.iter().find(|m| m.key == key).map(|m| &m.value),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Node::String { value, .. } => Some(value),
            _ => None,
        }
    }

    pub(crate) fn as_i64(&self) -> Option<i64> {
        match self {
            Node::Integer { value, .. } => Some(*value),
            _ => None,
        }
    }

    /// An array's items (none for anything else).
    pub(crate) fn items(&self) -> &[Node<'a>] {
        match self {
            Node::Array(items) => items,
            _ => &[],
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }

    /// A leaf as the form shows it; an object or array with any content as `{…}` / `[…]`.
    pub(crate) fn shown(&self) -> String {
        match self {
            Node::Object(m) if m.is_empty() => "{}".into(),
            Node::Object(_) => "{…}".into(),
            Node::Array(items) if items.is_empty() => "[]".into(),
            Node::Array(_) => "[…]".into(),
            Node::String { literal, .. } => visible(literal),
            Node::Integer { literal, .. } => literal.to_string(),
            Node::Bool(b) => b.to_string(),
            Node::Null => "null".into(),
        }
    }
}

/// `body` read from its bytes; `Err` says what the form could not show exactly.
pub fn parse(body: &str) -> Result<Node<'_>, Unreadable> {
    let mut reader = Reader { bytes: body.as_bytes(), text: body, at: 0 };
    reader.space();
    if reader.peek() != Some(b'{') {
        return Err(Unreadable::NotAnObject);
    }
    let node = reader.value(&Where::Body, 0)?;
    reader.space();
    if reader.at != reader.bytes.len() {
        return Err(Unreadable::TextAfter { at: reader.at });
    }
    Ok(node)
}

/// Every leaf of a body [`parse`] read, as (path, literal as sent), in the order of the bytes.
pub(crate) fn leaves_of(body: &Node) -> Vec<(String, String)> {
    let mut out = Vec::new();
    flatten(body, "body", &mut out);
    out
}

/// [`leaves_of`] the body `body`.
#[cfg(test)]
fn leaves(body: &str) -> Result<Vec<(String, String)>, Unreadable> {
    Ok(leaves_of(&parse(body)?))
}

fn flatten(node: &Node, path: &str, out: &mut Vec<(String, String)>) {
    match node {
        Node::Object(members) if !members.is_empty() => {
            members.iter().for_each(|m| flatten(&m.value, &label(path, m.literal), out))
        }
        Node::Array(items) if !items.is_empty() => {
            items.iter().enumerate().for_each(|(i, item)| flatten(item, &format!("{path}[{i}]"), out))
        }
        leaf => out.push((path.to_string(), leaf.shown())),
    }
}

/// Where the reader is, as the form labels it; made into text only for an error (a label for
/// every member and item of every body would cost about what reading it does).
enum Where<'p> {
    Body,
    Member(&'p Where<'p>, &'p str),
    Item(&'p Where<'p>, usize),
}

impl Where<'_> {
    fn shown(&self) -> String {
        match self {
            Where::Body => "body".into(),
            Where::Member(up, literal) => label(&up.shown(), literal),
            Where::Item(up, i) => format!("{}[{i}]", up.shown()),
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn fail(&self, what: &str) -> Unreadable {
        Unreadable::Syntax { what: what.into(), at: self.at }
    }

    fn expect(&mut self, b: u8) -> Result<(), Unreadable> {
        if self.peek() != Some(b) {
            return Err(self.fail(&format!("expected `{}`", b as char)));
        }
        self.at += 1;
        Ok(())
    }

    /// The value at the reader, at `at` (what an error names).
    fn value(&mut self, at: &Where, depth: usize) -> Result<Node<'a>, Unreadable> {
        if depth > MAX_DEPTH {
            return Err(Unreadable::TooDeep);
        }
        self.space();
        match self.peek() {
            Some(b'{') => self.object(at, depth),
            Some(b'[') => self.array(at, depth),
            Some(b'"') => {
                let (literal, value) = self.string()?;
                Ok(Node::String { literal, value })
            }
            Some(b'-' | b'0'..=b'9') => self.number(at),
            _ => {
                for (word, node) in [("true", Node::Bool(true)), ("false", Node::Bool(false)), ("null", Node::Null)] {
                    if self.bytes[self.at..].starts_with(word.as_bytes()) {
                        self.at += word.len();
                        return Ok(node);
                    }
                }
                Err(self.fail("expected a value"))
            }
        }
    }

    fn object(&mut self, at: &Where, depth: usize) -> Result<Node<'a>, Unreadable> {
        self.expect(b'{')?;
        self.space();
        let mut members: Vec<Member<'a>> = Vec::new();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Node::Object(members));
        }
        let mut many: Option<HashSet<Cow<'a, str>>> = None;
        loop {
            self.space();
            let (literal, key) = self.string()?;
            let twice = match &mut many {
                Some(keys) => !keys.insert(key.clone()),
                None => members.iter().any(|m| m.key == key),
            };
            if twice {
                return Err(Unreadable::KeyTwice { key: visible(literal), object: at.shown() });
            }
            self.space();
            self.expect(b':')?;
            let value = self.value(&Where::Member(at, literal), depth + 1)?;
            members.push(Member { literal, key, value });
            if many.is_none() && members.len() >= SCANNED_MEMBERS {
                many = Some(members.iter().map(|m| m.key.clone()).collect());
            }
            if !self.more(b'}')? {
                return Ok(Node::Object(members));
            }
        }
    }

    /// After a member or item: `true` past a `,`, `false` past the `close` that ends it.
    fn more(&mut self, close: u8) -> Result<bool, Unreadable> {
        self.space();
        let comma = match self.peek() {
            Some(b',') => true,
            Some(b) if b == close => false,
            _ => return Err(self.fail(&format!("expected `,` or `{}`", close as char))),
        };
        self.at += 1;
        Ok(comma)
    }

    fn array(&mut self, at: &Where, depth: usize) -> Result<Node<'a>, Unreadable> {
        self.expect(b'[')?;
        self.space();
        let mut items = Vec::new();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Node::Array(items));
        }
        loop {
            items.push(self.value(&Where::Item(at, items.len()), depth + 1)?);
            if !self.more(b']')? {
                return Ok(Node::Array(items));
            }
        }
    }

    /// A string literal: its raw text (with the quotes) and its decoded value (borrowed when it
    /// has no escape).
    fn string(&mut self) -> Result<(&'a str, Cow<'a, str>), Unreadable> {
        let start = self.at;
        self.expect(b'"')?;
        let mut decoded: Option<String> = None;
        loop {
            let Some(b) = self.peek() else {
                return Err(self.fail("unterminated string"));
            };
            match b {
                b'"' => {
                    self.at += 1;
                    let text = self.text;
                    let value = match decoded {
                        Some(owned) => Cow::Owned(owned),
                        None => Cow::Borrowed(&text[start + 1..self.at - 1]),
                    };
                    return Ok((&text[start..self.at], value));
                }
                b'\\' => {
                    let text = self.text;
                    let so_far = &text[start + 1..self.at];
                    self.at += 1;
                    let c = self.escape()?;
                    decoded.get_or_insert_with(|| so_far.to_string()).push(c);
                }
                0..=0x1f => return Err(self.fail("a raw control character in a string")),
                _ => {
                    let c = self.text[self.at..].chars().next().expect("inside the text");
                    if let Some(d) = &mut decoded {
                        d.push(c);
                    }
                    self.at += c.len_utf8();
                }
            }
        }
    }

    fn escape(&mut self) -> Result<char, Unreadable> {
        let Some(b) = self.peek() else {
            return Err(self.fail("unterminated escape"));
        };
        self.at += 1;
        Ok(match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = self.hex4()?;
                if (0xDC00..0xE000).contains(&high) {
                    return Err(self.fail("a \\u escape that is a lone low surrogate, no character"));
                }
                if (0xD800..0xDC00).contains(&high) {
                    if !self.bytes[self.at..].starts_with(b"\\u") {
                        return Err(self.fail("a \\u escape that is a lone high surrogate, no character"));
                    }
                    self.at += 2;
                    let low = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(self.fail("a high surrogate escape not followed by a low one"));
                    }
                    char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)).expect("a surrogate pair")
                } else {
                    char::from_u32(high).expect("not a surrogate")
                }
            }
            _ => return Err(self.fail("an unknown escape")),
        })
    }

    fn hex4(&mut self) -> Result<u32, Unreadable> {
        let digits = self.bytes.get(self.at..self.at + 4).ok_or_else(|| self.fail("a short \\u escape"))?;
        // four hex digits exactly: `from_str_radix` alone would take `+041`, which JSON does not
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return Err(self.fail("a \\u escape without four hex digits"));
        }
        let text = std::str::from_utf8(digits).expect("ASCII hex digits");
        let n = u32::from_str_radix(text, 16).expect("four hex digits");
        self.at += 4;
        Ok(n)
    }

    /// A number, if it is a plain integer the form can show as the value it is.
    fn number(&mut self, at: &Where) -> Result<Node<'a>, Unreadable> {
        let start = self.at;
        while matches!(self.peek(), Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
            self.at += 1;
        }
        let text: &'a str = self.text;
        let literal = &text[start..self.at];
        let digits = literal.strip_prefix('-').unwrap_or(literal);
        let plain = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'))
            && literal != "-0";
        match literal.parse::<i64>() {
            Ok(value) if plain && value.unsigned_abs() <= MAX_SAFE_INTEGER as u64 => {
                Ok(Node::Integer { literal, value })
            }
            _ => Err(Unreadable::NotAPlainInteger { literal: literal.into(), at: at.shown() }),
        }
    }
}

/// The label of `path`'s member `raw` (a key literal): `path.key` for a plain key, `path["…"]`
/// with the literal for any other, so that no key can read as a path into nested objects
/// (`"aSide.accessPoint.port.uuid"`) or as a line's label and value (`"uuid: x"`).
fn label(path: &str, raw: &str) -> String {
    let inner = &raw[1..raw.len() - 1];
    let plain = !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if plain { format!("{path}.{inner}") } else { format!("{path}[{}]", visible(raw)) }
}

/// `s` with every character a person cannot see written as a visible `\u{…}` escape (`\n`,
/// `\r`, `\t` as such), so that no value can hide a difference or pose as another line.
pub(crate) fn visible(s: &str) -> String {
    crate::log_lines::escape_where(s, invisible)
}

/// Controls, Unicode format characters (category Cf), separators other than the ASCII space,
/// fillers, variation selectors, private-use characters and noncharacters.
fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(c as u32,
            0x00A0 | 0x00AD | 0x034F | 0x061C | 0x0600..=0x0605 | 0x06DD | 0x070F | 0x0890 | 0x0891 | 0x08E2
            | 0x115F | 0x1160 | 0x1680 | 0x17B4 | 0x17B5 | 0x180B..=0x180F | 0x2000..=0x200F | 0x2028..=0x202F
            | 0x205F..=0x206F | 0x2800 | 0x3000 | 0x3164 | 0xFDD0..=0xFDEF | 0xFE00..=0xFE0F | 0xFEFF | 0xFFA0
            | 0xFFF0..=0xFFFB | 0xFFFE | 0xFFFF | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A | 0xE000..=0xF8FF | 0xE0000..=0xE0FFF | 0xF0000..=0x10FFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(body: &str) -> String {
        leaves(body).unwrap_err().to_string()
    }

    #[test]
    fn leaves_are_shown_as_sent_in_byte_order() {
        let body = r#"{"name":"\u0041b","bandwidth":50,"tags":[],"x":{},"ok":true,"n":null,"neg":-7}"#;
        let got = leaves(body).unwrap();
        let want = [
            ("body.name", r#""\u0041b""#),
            ("body.bandwidth", "50"),
            ("body.tags", "[]"),
            ("body.x", "{}"),
            ("body.ok", "true"),
            ("body.n", "null"),
            ("body.neg", "-7"),
        ];
        assert_eq!(got, want.map(|(a, b)| (a.to_string(), b.to_string())));
    }

    #[test]
    fn a_key_cannot_pose_as_a_nested_path_or_a_label() {
        let got = leaves(r#"{"aSide.accessPoint.port.uuid":"decoy","uuid: x":1,"a-b_c":2}"#).unwrap();
        let labels: Vec<&str> = got.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, [r#"body["aSide.accessPoint.port.uuid"]"#, r#"body["uuid: x"]"#, "body.a-b_c"]);
    }

    #[test]
    fn the_tree_holds_decoded_keys_and_values_beside_their_literals() {
        let body = r#"{"n\u0061me":"a\u0042c","plain":"x","bw":1000,"none":null,"list":[1,true],"o":{"k":"v"}}"#;
        let tree = parse(body).unwrap();
        assert_eq!(tree.get("name").as_str(), Some("aBc"), "a key is found as decoded");
        assert!(matches!(tree.get("name"), Node::String { literal: r#""a\u0042c""#, .. }));
        assert!(matches!(tree.get("plain"), Node::String { value: Cow::Borrowed("x"), .. }), "no escape, no copy");
        assert_eq!(tree.get("bw").as_i64(), Some(1000));
        assert!(tree.has("none") && tree.get("none").is_null() && !tree.has("absent") && tree.get("absent").is_null());
        assert_eq!(tree.get("list").items(), [Node::Integer { literal: "1", value: 1 }, Node::Bool(true)]);
        assert_eq!(tree.get("o").get("k").as_str(), Some("v"));
        assert!(tree.get("plain").get("k").is_null() && tree.get("o").items().is_empty());
        let (label, shown) = &leaves(body).unwrap()[0];
        assert_eq!(
            (label.as_str(), shown.as_str()),
            (r#"body["n\u0061me"]"#, r#""a\u0042c""#),
            "the form shows literals"
        );
    }

    #[test]
    fn a_duplicate_in_a_large_object_is_found_wherever_it_is() {
        let keys: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        assert!(leaves(&format!("{{{}}}", keys.join(","))).is_ok());
        for (first, again) in [(0, "k0"), (7, "k7"), (8, "k8"), (39, "k39"), (3, "k\\u0033")] {
            let body = format!("{{{},\"{again}\":1}}", keys.join(","));
            assert!(refused(&body).contains("twice"), "the key k{first} given again as {again}");
        }
    }

    #[test]
    fn duplicate_keys_are_refused_after_decoding_escapes() {
        assert!(refused(r#"{"bandwidth":50,"bandwidth":10000}"#).contains("twice"));
        assert!(refused(r#"{"bandwidth":50,"band\u0077idth":10000}"#).contains("twice"));
        assert!(refused(r#"{"a":{"k":1,"k":2}}"#).contains("twice in `body.a`"));
        assert!(leaves(r#"{"a":{"k":1},"b":{"k":2}}"#).is_ok(), "the same key in two objects is fine");
    }

    #[test]
    fn the_tree_reads_as_the_value_serde_json_reads_of_the_same_bytes() {
        let body = r#"{"name":"a\u0041\n","n":-9007199254740991,"a":[{"b":null,"c":true},[],{}],"e\u0078":"é"}"#;
        let from_tree = parse(body).unwrap().to_value();
        assert_eq!(from_tree, serde_json::from_str::<serde_json::Value>(body).unwrap());
        assert_eq!(from_tree["name"], "aA\n");
        assert_eq!(from_tree["ex"], "é");
    }

    #[test]
    fn only_plain_safe_integers_pass() {
        for n in [
            "5e2",
            "-0",
            "100000000000000000001",
            "50.00000000000000001",
            "1.0",
            "01",
            "9007199254740992",
            "-9223372036854775808",
        ] {
            assert!(refused(&format!(r#"{{"bandwidth":{n}}}"#)).contains("plain integers"), "{n}");
        }
        assert!(refused(r#"{"bandwidth":+1}"#).contains("expected a value"));
        assert_eq!(
            leaves(r#"{"a":[1,{"b c":{"d":5e2}}]}"#).unwrap_err(),
            Unreadable::NotAPlainInteger { literal: "5e2".into(), at: r#"body.a[1]["b c"].d"#.into() }
        );
        assert_eq!(
            leaves(r#"{"a":{"k":1,"\u006b":2}}"#).unwrap_err(),
            Unreadable::KeyTwice { key: r#""\u006b""#.into(), object: "body.a".into() }
        );
        assert_eq!(leaves(r#"{"n":1} x"#).unwrap_err(), Unreadable::TextAfter { at: 8 });
        assert_eq!(leaves("[1]").unwrap_err(), Unreadable::NotAnObject);
        assert_eq!(leaves(&"{\"a\":".repeat(40)).unwrap_err(), Unreadable::TooDeep);
        assert!(matches!(leaves(r#"{"bandwidth":+1}"#).unwrap_err(), Unreadable::Syntax { at: 13, .. }));
        let nested = refused(r#"{"a":[1,{"b c":{"d":5e2}}]}"#);
        assert!(nested.contains(r#"at `body.a[1]["b c"].d`"#), "the error names where the number is: {nested}");
        for n in ["0", "9007199254740991", "-9007199254740991", "1000"] {
            assert!(leaves(&format!(r#"{{"bandwidth":{n}}}"#)).is_ok(), "{n}");
        }
    }

    #[test]
    fn invisible_characters_are_shown_and_bad_escapes_refused() {
        let body = "{\"name\":\"a\u{200b}b\u{2060}c\u{feff}d\u{ad}e\u{202e}f\u{a0}g\"}";
        let (_, shown) = &leaves(body).unwrap()[0];
        assert_eq!(shown, r#""a\u{200b}b\u{2060}c\u{feff}d\u{ad}e\u{202e}f\u{a0}g""#);
        assert_eq!(leaves(r#"{"n":"caf\u00e9 Zürich"}"#).unwrap()[0].1, r#""caf\u00e9 Zürich""#);
        assert!(refused(r#"{"n":"\ud800"}"#).contains("surrogate"));
        assert!(refused(r#"{"n":"\u+041"}"#).contains("four hex digits"));
        assert!(refused(r#"{"n":"\udc00x"}"#).contains("surrogate"));
        assert!(leaves(r#"{"n":"\ud83d\ude00"}"#).is_ok());
        assert!(refused("{\"n\":\"a\nb\"}").contains("control"));
        assert!(refused(r#"{"n":1} x"#).contains("after"));
        assert!(refused("[1]").contains("not a JSON object"));
        assert!(refused(&format!("{}{}", "{\"a\":".repeat(40), "1")).contains("deeper"));
    }
}
