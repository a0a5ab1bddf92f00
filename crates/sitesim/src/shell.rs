//! Shell words, for recorded command lines and generated scripts.

/// `word` as one shell word: unchanged if it has only safe characters, else single-quoted.
pub fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(quote("../shared/a.swf.gz"), "../shared/a.swf.gz");
        assert_eq!(quote("my file"), "'my file'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }
}
