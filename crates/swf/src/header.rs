/// One `;` comment line of an SWF header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderLine {
    /// `; Key: value` — a header field (the value is trimmed).
    Field {
        /// The key, as written (`MaxProcs`).
        key: String,
        /// The text after the colon, trimmed (`338 (batch partition; 512 total)`).
        value: String,
    },
    /// Any other comment line: the text after the `;`, right-trimmed.
    Text(String),
}

/// Header keys whose value must start with a whole number; checked when a file is read.
pub(crate) const NUMERIC_KEYS: [&str; 5] = [
    "MaxProcs",
    "MaxNodes",
    "UnixStartTime",
    "TimeZone",
    "MaxJobs",
];

/// The header of an SWF file: every comment line in order, with typed access to the fields a
/// simulator needs. Keys are matched case-insensitively; the first occurrence wins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Header {
    lines: Vec<HeaderLine>,
}

impl Header {
    /// An empty header.
    pub fn new() -> Header {
        Header::default()
    }

    /// Every header line, in file order.
    pub fn lines(&self) -> &[HeaderLine] {
        &self.lines
    }

    /// Appends a `; key: value` field.
    pub fn push_field(&mut self, key: impl Into<String>, value: impl ToString) {
        self.lines.push(HeaderLine::Field {
            key: key.into(),
            value: value.to_string().trim().to_string(),
        });
    }

    /// Sets field `key` (case-insensitive): the first such field's value is replaced, or the
    /// field appended if there is none.
    pub fn set_field(&mut self, key: &str, value: impl ToString) {
        let value = value.to_string().trim().to_string();
        let first = self.lines.iter_mut().find_map(|line| match line {
            HeaderLine::Field { key: k, value } if k.eq_ignore_ascii_case(key) => Some(value),
            _ => None,
        });
        match first {
            Some(old) => *old = value,
            None => self.push_field(key, value),
        }
    }

    pub(crate) fn push_line(&mut self, line: HeaderLine) {
        self.lines.push(line);
    }

    /// The value of the first field named `key` (case-insensitive), if any.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.lines.iter().find_map(|line| match line {
            HeaderLine::Field { key: k, value } if k.eq_ignore_ascii_case(key) => {
                Some(value.as_str())
            }
            _ => None,
        })
    }

    /// The leading whole number of field `key` (`"338 (batch partition)"` gives 338).
    pub fn get_int(&self, key: &str) -> Option<i64> {
        self.get(key).and_then(leading_int)
    }

    /// `Version`: the SWF version of the file.
    pub fn version(&self) -> Option<&str> {
        self.get("Version")
    }

    /// `MaxProcs`: processors in the machine (the replay machine size by default).
    pub fn max_procs(&self) -> Option<u64> {
        self.get_int("MaxProcs").and_then(|v| u64::try_from(v).ok())
    }

    /// `MaxNodes`: nodes in the machine (used when `MaxProcs` is absent).
    pub fn max_nodes(&self) -> Option<u64> {
        self.get_int("MaxNodes").and_then(|v| u64::try_from(v).ok())
    }

    /// `UnixStartTime`: the epoch second that submit time 0 corresponds to.
    pub fn unix_start_time(&self) -> Option<i64> {
        self.get_int("UnixStartTime")
    }

    /// `TimeZone`: the log's offset from UTC in seconds (-28800 for US/Pacific winter time).
    pub fn time_zone(&self) -> Option<i64> {
        self.get_int("TimeZone")
    }

    /// `TimeZoneString`: the log's time zone name (`US/Pacific`).
    pub fn time_zone_string(&self) -> Option<&str> {
        self.get("TimeZoneString")
    }
}

/// The whole number at the start of `value`: its first whitespace-separated token.
pub(crate) fn leading_int(value: &str) -> Option<i64> {
    value.split_whitespace().next()?.parse().ok()
}

/// Parses the text of a comment line (without the leading `;`) into a header line. A field is
/// `Key: value` with an alphanumeric key, indented by at most two spaces; deeper-indented lines
/// are continuations of the previous field (`;              http://...`) and stay text.
pub(crate) fn parse_comment(text: &str) -> HeaderLine {
    let trimmed = text.trim();
    let indent = text.len() - text.trim_start().len();
    if indent > 2 {
        return HeaderLine::Text(text.trim_end().to_string());
    }
    if let Some((key, value)) = trimmed.split_once(':') {
        let key = key.trim();
        let is_key = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric());
        if is_key {
            return HeaderLine::Field {
                key: key.to_string(),
                value: value.trim().to_string(),
            };
        }
    }
    HeaderLine::Text(text.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_text_lines_are_told_apart() {
        assert_eq!(
            parse_comment(" MaxNodes: 338 (batch partition; 512 total)"),
            HeaderLine::Field {
                key: "MaxNodes".into(),
                value: "338 (batch partition; 512 total)".into()
            }
        );
        assert_eq!(
            parse_comment("         user=135 and (job>=47421)"),
            HeaderLine::Text("         user=135 and (job>=47421)".into())
        );
        assert_eq!(
            parse_comment("              http://www.x"),
            HeaderLine::Text("              http://www.x".into())
        );
    }

    #[test]
    fn typed_accessors_read_leading_numbers() {
        let mut h = Header::new();
        h.push_field("MaxNodes", "338 (batch partition; 512 total)");
        h.push_field("timezone", "-28800");
        h.push_field("TimeZoneString", "US/Pacific");
        assert_eq!(h.max_nodes(), Some(338));
        assert_eq!(h.max_procs(), None);
        assert_eq!(h.time_zone(), Some(-28800));
        assert_eq!(h.time_zone_string(), Some("US/Pacific"));
    }
}
