//! Share links: a scenario in a URL query, versioned so that old links keep working.
//!
//! Version 1: `v=1&s=<base64url of compact JSON {"m": model, "s": system, "t": task}>`, the
//! three MAD-Max configs as the page holds them (so a link restores exactly what was on screen,
//! half-typed fields included). Decoding never panics: any text gives a `Doc` or an error that
//! says what is wrong. Knows nothing of the DOM (the page reads and writes `location.search`).

use crate::doc::Doc;
use serde_json::{json, Map, Value};
use std::fmt;

/// The version this build writes.
pub const VERSION: u32 = 1;

/// Longest query this build puts in an address: many servers refuse longer request lines
/// (nginx answers 414 above 8 KB by default, Apache above 8,190 bytes). A longer scenario is
/// shared as a file instead.
pub const MAX_LINK_CHARS: usize = 8000;

/// Why a link could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShareError {
    /// No scenario in the query (a plain link to the page).
    Empty,
    /// A version this build does not know.
    UnknownVersion(String),
    /// The payload is damaged.
    Damaged(String),
}

impl fmt::Display for ShareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShareError::Empty => write!(f, "the link holds no scenario"),
            ShareError::UnknownVersion(v) => {
                write!(f, "the link was made by a newer or unknown version of madmax (v={v})")
            }
            ShareError::Damaged(why) => write!(f, "the link is damaged or incomplete ({why})"),
        }
    }
}

/// The query string (without `?`) for a scenario.
pub fn encode(doc: &Doc) -> String {
    let payload = json!({ "m": doc.model, "s": doc.system, "t": doc.task }).to_string();
    format!("v={VERSION}&s={}", base64url_encode(payload.as_bytes()))
}

/// Reads a query string (with or without the leading `?`; other parameters are ignored).
pub fn decode(query: &str) -> Result<Doc, ShareError> {
    let query = query.strip_prefix('?').unwrap_or(query);
    let param =
        |name: &str| query.split('&').find_map(|kv| kv.split_once('=').filter(|(k, _)| *k == name).map(|(_, v)| v));
    let (version, payload) = match (param("v"), param("s")) {
        (None, None) => return Err(ShareError::Empty),
        (Some(v), Some(s)) => (v, s),
        (None, Some(_)) => return Err(ShareError::Damaged("no version".to_owned())),
        (Some(_), None) => return Err(ShareError::Damaged("no scenario".to_owned())),
    };
    match version {
        "1" => decode_v1(payload),
        other => Err(ShareError::UnknownVersion(other.chars().take(12).collect())),
    }
}

fn decode_v1(payload: &str) -> Result<Doc, ShareError> {
    let damaged = |why: &str| ShareError::Damaged(why.to_owned());
    // Base64 takes 4 characters for 3 bytes: a longer payload holds more JSON than madmax reads.
    if payload.len() > crate::input::MAX_JSON_BYTES / 3 * 4 + 4 {
        return Err(damaged("longer than any scenario"));
    }
    let bytes = base64url_decode(payload).ok_or_else(|| damaged("not base64url"))?;
    let text = String::from_utf8(bytes).map_err(|_| damaged("not UTF-8"))?;
    let v: Value = crate::input::parse_json(&text).map_err(ShareError::Damaged)?;
    let part = |key: &str| -> Result<Map<String, Value>, ShareError> {
        match v.get(key) {
            Some(Value::Object(m)) => Ok(m.clone()),
            _ => Err(ShareError::Damaged(format!("no {} config", name_of(key)))),
        }
    };
    Ok(Doc { model: part("m")?, system: part("s")?, task: part("t")? })
}

fn name_of(key: &str) -> &'static str {
    match key {
        "m" => "model",
        "s" => "system",
        _ => "task",
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64 with the URL-safe alphabet and no padding (RFC 4648 section 5).
pub fn base64url_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// Decodes [`base64url_encode`]'s output; `None` on any other character or a bad length.
/// Standard-alphabet characters (`+`, `/`) and padding are accepted too, since links get
/// rewritten by mail clients.
pub fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    if text.len() % 4 == 1 {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len() - 1]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets;

    #[test]
    fn base64url_round_trips_every_length() {
        for len in 0..40 {
            let data: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let text = base64url_encode(&data);
            assert!(text.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
            assert_eq!(base64url_decode(&text), Some(data));
        }
        assert_eq!(base64url_encode(b"madmax"), "bWFkbWF4");
        assert_eq!(base64url_decode("bWFkbWF4"), Some(b"madmax".to_vec()));
        assert_eq!(base64url_decode("bWE="), Some(b"ma".to_vec()));
        assert_eq!(base64url_decode("b"), None);
        assert_eq!(base64url_decode("b*c="), None);
    }

    #[test]
    fn every_preset_round_trips_in_a_short_link() {
        let p = presets::all().expect("presets");
        for s in &p.scenarios {
            let doc = Doc::new(p.configs(s).expect("configs"));
            let query = encode(&doc);
            assert!(query.len() < 2000, "{}: link of {} characters", s.id, query.len());
            assert_eq!(decode(&query), Ok(doc.clone()), "{}", s.id);
            assert_eq!(decode(&format!("?view=calc&{query}")), Ok(doc), "{}", s.id);
        }
    }

    #[test]
    fn outsized_or_ambiguous_payloads_are_refused_by_name() {
        let huge = format!("v=1&s={}", "A".repeat(crate::input::MAX_JSON_BYTES * 2));
        assert_eq!(decode(&huge), Err(ShareError::Damaged("longer than any scenario".into())));
        let twice = base64url_encode(br#"{"m": {}, "s": {}, "t": {}, "t": {}}"#);
        let Err(ShareError::Damaged(why)) = decode(&format!("v=1&s={twice}")) else { panic!("accepted") };
        assert!(why.contains("\"t\" appears twice"), "{why}");
    }

    #[test]
    fn garbage_gives_an_error_not_a_panic() {
        assert_eq!(decode(""), Err(ShareError::Empty));
        assert_eq!(decode("?view=learn"), Err(ShareError::Empty));
        assert!(matches!(decode("v=9&s=abc"), Err(ShareError::UnknownVersion(_))));
        assert!(matches!(decode("v=1"), Err(ShareError::Damaged(_))));
        assert!(matches!(decode("s=abc"), Err(ShareError::Damaged(_))));
        assert!(matches!(decode("v=1&s=%%%"), Err(ShareError::Damaged(_))));
        assert!(matches!(decode("v=1&s=bWFkbWF4"), Err(ShareError::Damaged(_)))); // "madmax": not JSON
        let missing = base64url_encode(br#"{"m": {}, "s": {}}"#);
        assert!(matches!(decode(&format!("v=1&s={missing}")), Err(ShareError::Damaged(_))));
        // A link cut short in transit.
        let p = presets::all().expect("presets");
        let doc = Doc::new(p.configs(&p.scenarios[0]).expect("configs"));
        let q = encode(&doc);
        for cut in [q.len() / 2, q.len() - 1, q.len() - 5] {
            assert!(decode(&q[..cut]).is_err(), "cut at {cut}");
        }
        // Arbitrary bytes.
        let mut seed = 7u64;
        for _ in 0..500 {
            let len = (seed % 60) as usize;
            let text: String = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (32 + (seed >> 33) % 95) as u8 as char
                })
                .collect();
            let _ = decode(&format!("v=1&s={text}"));
            let _ = decode(&text);
        }
    }
}
