//! Text from outside (a scenario file, pasted JSON, a link's payload, a CSV of measured runs)
//! read within bounds, before any work: at most so many bytes, an optional UTF-8 byte-order
//! mark dropped the same way everywhere, JSON that names a key given twice instead of silently
//! keeping the last, lists of bounded length. Every refusal is a sentence that quotes at most a
//! short prefix of the input. Pure; the CLI and the page share it.

use crate::engine::raw::{escaped, unprintable};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;

/// Most bytes of JSON one scenario may take: a MAD-Max case file takes under 16 KB, so this is
/// some 60 times what any scenario needs, and small enough to parse in milliseconds.
pub const MAX_JSON_BYTES: usize = 1 << 20;

/// Most items of one JSON list: a scenario's longest lists are its parallel levels (at most 8).
pub const MAX_LIST_ITEMS: usize = 1024;

/// Most bytes of one CSV file of measured runs (some 200,000 rows with their notes).
pub const MAX_CSV_BYTES: usize = 256 << 20;

/// Most rows of one CSV file of measured runs.
pub const MAX_CSV_ROWS: usize = 200_000;

/// The text without a leading UTF-8 byte-order mark (as some editors save files).
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// A byte count as a refusal says it: "3.2 MB".
fn size(bytes: usize) -> String {
    crate::units::bytes(bytes as f64)
}

/// Refuses text longer than `max` bytes; `what` names it ("the scenario").
pub fn check_size(text: &str, max: usize, what: &str) -> Result<(), String> {
    if text.len() > max {
        Err(format!("{what} is {}, more than the {} madmax reads", size(text.len()), size(max)))
    } else {
        Ok(())
    }
}

/// Parses one JSON document of at most [`MAX_JSON_BYTES`]: a leading byte-order mark is
/// skipped, a key given twice in one object is an error naming it (with its path), and so is a
/// list of more than [`MAX_LIST_ITEMS`] items.
pub fn parse_json(text: &str) -> Result<Value, String> {
    check_size(text, MAX_JSON_BYTES, "the JSON text")?;
    let text = without_bom(text);
    let mut d = serde_json::Deserializer::from_str(text);
    let v =
        Strict { path: String::new() }.deserialize(&mut d).and_then(|v| d.end().map(|()| v)).map_err(|e| {
            match e.classify() {
                serde_json::error::Category::Syntax => {
                    format!("not valid JSON: {e} (NaN and Infinity are not JSON numbers)")
                }
                _ => format!("not valid JSON: {e}"),
            }
        })?;
    Ok(v)
}

/// Builds a [`Value`] as serde_json does, but refuses duplicate keys and long lists; `path`
/// locates the value for the message (`task.transformer_parallel[2]`).
struct Strict {
    path: String,
}

impl Strict {
    fn child(&self, key: &str) -> Strict {
        let key = crate::engine::raw::short(key);
        Strict { path: if self.path.is_empty() { key.into_owned() } else { format!("{}.{key}", self.path) } }
    }

    fn where_(&self) -> String {
        if self.path.is_empty() {
            "at the top level".to_owned()
        } else {
            format!("at {}", self.path)
        }
    }
}

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let item = Strict { path: format!("{}[{}]", self.path, items.len()) };
            let Some(v) = seq.next_element_seed(item)? else { break };
            if items.len() == MAX_LIST_ITEMS {
                return Err(de::Error::custom(format!(
                    "a list of more than {MAX_LIST_ITEMS} items {}; no scenario needs one",
                    self.where_()
                )));
            }
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let child = self.child(&key);
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "the key \"{}\" appears twice {}; keep one",
                    crate::engine::raw::short(&key),
                    self.where_()
                )));
            }
            let v = map.next_value_seed(child)?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// Text for a terminal: control characters (which could move the cursor, clear the screen or
/// retitle the window) and bidirectional overrides (which could make text read backwards) are
/// written as `\u{..}`; line ends, tabs and everything else as they are.
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c != '\n' && c != '\t' && unprintable(c), |c| format!("\\u{{{c:x}}}"))
}

/// JSON text for a terminal: the characters [`printable`] escapes that JSON writers leave raw
/// (DEL, the C1 controls, bidirectional overrides; C0 controls are escaped already) written as
/// JSON escapes (`\u202e`), which leaves the JSON equal.
pub fn printable_json(json: &str) -> Cow<'_, str> {
    escaped(json, |c| c >= '\u{7f}' && unprintable(c), |c| format!("\\u{c:04x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_within_bounds_parses_as_serde_json_does() {
        let text = r#"{"model": {"type": "LLM", "n": [1, 2.5, -3, true, null, "x"]}, "e": {}}"#;
        assert_eq!(parse_json(text), Ok(serde_json::from_str::<Value>(text).expect("json")));
        // A byte-order mark is dropped.
        assert_eq!(parse_json(&format!("\u{feff}{text}")), parse_json(text));
    }

    #[test]
    fn duplicate_keys_are_named_with_their_path() {
        let e = parse_json(r#"{"model": {"type": "LLM", "type": "ViT"}}"#).expect_err("duplicate");
        assert!(e.contains("\"type\" appears twice at model"), "{e}");
        let e = parse_json(r#"{"task": 1, "task": 2}"#).expect_err("duplicate");
        assert!(e.contains("\"task\" appears twice at the top level"), "{e}");
        // The same key in two objects is fine.
        assert!(parse_json(r#"{"a": {"k": 1}, "b": {"k": 2}}"#).is_ok());
    }

    #[test]
    fn long_lists_and_large_texts_are_refused_before_work_with_a_short_message() {
        let list = format!("{{\"task\": {{\"x\": [{}]}}}}", vec!["1"; MAX_LIST_ITEMS + 1].join(","));
        let e = parse_json(&list).expect_err("too long");
        assert!(e.contains("more than 1024 items at task.x"), "{e}");
        assert!(parse_json(&format!("[{}]", vec!["1"; MAX_LIST_ITEMS].join(","))).is_ok());
        let big = format!("\"{}\"", "a".repeat(MAX_JSON_BYTES));
        let e = parse_json(&big).expect_err("too big");
        assert!(e.len() < 120 && e.contains("1.05 MB"), "{e}");
        // A key holding text of any length is quoted short.
        let e = parse_json(&format!("{{\"{k}\": 1, \"{k}\": 2}}", k = "k".repeat(5000))).expect_err("dup");
        assert!(e.len() < 200, "{e}");
    }

    #[test]
    fn terminal_json_stays_the_same_json() {
        let v = serde_json::json!({"name": "a\u{1b}b\u{202e}c\u{9b}d"});
        let text = printable_json(&v.to_string()).into_owned();
        assert!(!text.contains('\u{202e}') && !text.contains('\u{1b}') && !text.contains('\u{9b}'), "{text}");
        assert_eq!(serde_json::from_str::<Value>(&text).expect("json"), v);
    }

    #[test]
    fn terminal_text_escapes_what_could_take_over_a_terminal() {
        assert_eq!(printable("GPT-3 175B"), "GPT-3 175B");
        assert_eq!(printable("a\u{1b}[2Jb\u{0}c\u{202e}d"), "a\\u{1b}[2Jb\\u{0}c\\u{202e}d");
        assert_eq!(printable("two\nlines\tand tab"), "two\nlines\tand tab");
    }
}
