//! The CSV reader of the measured runs: RFC 4180 records one at a time, so a long file is
//! never held as cells.

/// Parses RFC 4180 CSV text (quoted fields, doubled quotes, CRLF, LF or CR line ends, optional
/// BOM) into rows of fields.
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    Records::new(text).collect()
}

/// The records of CSV text one at a time (see [`parse_csv`]); blank lines are skipped.
pub struct Records<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
}

impl<'a> Records<'a> {
    pub fn new(text: &'a str) -> Records<'a> {
        Records { chars: crate::input::without_bom(text).chars().peekable() }
    }
}

impl Iterator for Records<'_> {
    type Item = Vec<String>;

    fn next(&mut self) -> Option<Vec<String>> {
        loop {
            self.chars.peek()?;
            let mut row = Vec::new();
            let mut field = String::new();
            let mut quoted = false;
            while let Some(c) = self.chars.next() {
                match (quoted, c) {
                    (true, '"') if self.chars.peek() == Some(&'"') => {
                        field.push('"');
                        self.chars.next();
                    }
                    (true, '"') => quoted = false,
                    (true, c) => field.push(c),
                    (false, '"') => quoted = true,
                    (false, ',') => row.push(std::mem::take(&mut field)),
                    (false, '\r' | '\n') => {
                        if c == '\r' && self.chars.peek() == Some(&'\n') {
                            self.chars.next();
                        }
                        break;
                    }
                    (false, c) => field.push(c),
                }
            }
            row.push(field);
            if !(row.len() == 1 && row[0].is_empty()) {
                return Some(row);
            }
        }
    }
}
