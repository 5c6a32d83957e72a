//! The CSV reader of the measured runs: RFC 4180 records one at a time, so a long file is
//! never held as cells.

/// Parses RFC 4180 CSV text (quoted fields, doubled quotes, CRLF, LF or CR line ends, optional
/// BOM) into rows of fields.
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    Records::new(text).collect()
}

/// The records of CSV text one at a time (see [`parse_csv`]); blank lines are skipped.
pub struct Records<'a> {
    text: &'a str,
    /// Where the next record starts, in bytes.
    at: usize,
}

impl<'a> Records<'a> {
    pub fn new(text: &'a str) -> Records<'a> {
        Records { text: crate::input::without_bom(text), at: 0 }
    }
}

impl Iterator for Records<'_> {
    type Item = Vec<String>;

    /// Scans bytes (every delimiter is ASCII, so each is a character boundary) and copies each
    /// run of plain text at once, not character by character.
    fn next(&mut self) -> Option<Vec<String>> {
        let (text, bytes) = (self.text, self.text.as_bytes());
        loop {
            if self.at >= bytes.len() {
                return None;
            }
            let mut row = Vec::new();
            let mut field = String::new();
            let mut quoted = false;
            let (mut i, mut run) = (self.at, self.at);
            // Where the last field ends and the next record starts: the line end, or the text's.
            let (mut end, mut next) = (bytes.len(), bytes.len());
            while let Some(&c) = bytes.get(i) {
                match (quoted, c) {
                    (true, b'"') => {
                        field.push_str(&text[run..i]);
                        if bytes.get(i + 1) == Some(&b'"') {
                            field.push('"');
                            i += 1;
                        } else {
                            quoted = false;
                        }
                        run = i + 1;
                    }
                    (false, b'"') => {
                        field.push_str(&text[run..i]);
                        quoted = true;
                        run = i + 1;
                    }
                    (false, b',') => {
                        field.push_str(&text[run..i]);
                        row.push(std::mem::take(&mut field));
                        run = i + 1;
                    }
                    (false, b'\r' | b'\n') => {
                        end = i;
                        next = if c == b'\r' && bytes.get(i + 1) == Some(&b'\n') { i + 2 } else { i + 1 };
                        break;
                    }
                    _ => {}
                }
                i += 1;
            }
            field.push_str(&text[run..end]);
            self.at = next;
            row.push(field);
            if !(row.len() == 1 && row[0].is_empty()) {
                return Some(row);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reader as it was written first, one character at a time: the byte scanner must read
    /// every text as it does.
    fn by_chars(text: &str) -> Vec<Vec<String>> {
        let mut chars = crate::input::without_bom(text).chars().peekable();
        let mut out = Vec::new();
        while chars.peek().is_some() {
            let (mut row, mut field, mut quoted) = (Vec::new(), String::new(), false);
            while let Some(c) = chars.next() {
                match (quoted, c) {
                    (true, '"') if chars.peek() == Some(&'"') => {
                        field.push('"');
                        chars.next();
                    }
                    (true, '"') => quoted = false,
                    (true, c) => field.push(c),
                    (false, '"') => quoted = true,
                    (false, ',') => row.push(std::mem::take(&mut field)),
                    (false, '\r' | '\n') => {
                        if c == '\r' && chars.peek() == Some(&'\n') {
                            chars.next();
                        }
                        break;
                    }
                    (false, c) => field.push(c),
                }
            }
            row.push(field);
            if !(row.len() == 1 && row[0].is_empty()) {
                out.push(row);
            }
        }
        out
    }

    #[test]
    fn the_byte_scanner_reads_every_text_as_the_character_reader_does() {
        // Texts of 0 to 23 pieces drawn from delimiters, quotes, line ends, a BOM and
        // multi-byte letters, by a fixed linear congruential sequence (the same every run).
        let pieces = ["a", "bc", ",", "\"", "\"\"", "\r", "\n", "\r\n", "é", "日本", " ", "\u{feff}", "1.5"];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut draw = |n: usize| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize % n
        };
        for _ in 0..20_000 {
            let text: String = (0..draw(24)).map(|_| pieces[draw(pieces.len())]).collect();
            assert_eq!(parse_csv(&text), by_chars(&text), "{text:?}");
        }
        let shipped = include_str!("../presets/data/validation/training.csv");
        assert_eq!(parse_csv(shipped), by_chars(shipped));
    }
}
