//! The option tables: every option of `run` and `replay`, declared once.

/// The command-line flag of the option `key`: `--` and the key with `-` for `_`.
pub fn flag_of(key: &str) -> String {
    format!("--{}", key.replace('_', "-"))
}
