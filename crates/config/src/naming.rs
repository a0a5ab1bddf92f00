//! Options named in messages. The library names an option by its key (`node_processors`, the
//! key of the option tables); each front end says it in its own words when it shows the
//! message: `--node-processors` on the command line ([`Style::Flags`], with the option tables'
//! flag of each key), `node_processors` in Python ([`Style::Keywords`]). A message carries the
//! keys it names as markers ([`key`], [`key_value`]); [`render`] turns them into words, and the
//! error's `Display` (for anything that does not render) shows the bare keys. Naming knows no
//! option table: the front end that says flags hands over the lookup.

use std::fmt::Display;

use cluster::{PartKind, PolicyError};

/// Opens a marked key in a message.
const OPEN: char = '\u{1}';
/// Separates a marked key from its value.
const VALUE: char = '\u{1f}';
/// Closes a marked key.
const CLOSE: char = '\u{2}';

/// How a front end names options in messages.
#[derive(Debug, Clone, Copy)]
pub enum Style {
    /// The keys themselves, a value after ` = ` (`node_processors = 0`): what files say.
    Keys,
    /// Command-line flags, a value after a space (`--node-processors 0`); the function gives
    /// the flag of a key (the option tables' `options::flag_of`).
    Flags(fn(&str) -> String),
    /// Python keywords, a value after `=` (`node_processors=0`).
    Keywords,
}

/// The option `key`, to be named by the front end (`--node-processors`).
pub fn key(key: &str) -> String {
    format!("{OPEN}{key}{CLOSE}")
}

/// The option `key` set to `value` (as the user wrote it), named by the front end
/// (`--node-processors 0`, `node_processors=0`).
pub fn key_value(key: &str, value: impl Display) -> String {
    format!("{OPEN}{key}{VALUE}{value}{CLOSE}")
}

/// How `style` names the option `key`.
pub fn name(key: &str, style: Style) -> String {
    match style {
        Style::Keys | Style::Keywords => key.to_string(),
        Style::Flags(flag_of) => flag_of(key),
    }
}

/// `text` with every marked option named in `style`.
pub fn render(text: &str, style: Style) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find(OPEN) {
        out.push_str(&rest[..open]);
        let after = &rest[open + OPEN.len_utf8()..];
        let Some(close) = after.find(CLOSE) else {
            // An unclosed marker: keep the text as it is, without the marker.
            out.push_str(after);
            return out;
        };
        let marked = &after[..close];
        match marked.split_once(VALUE) {
            None => out.push_str(&name(marked, style)),
            Some((key, value)) => {
                out.push_str(&name(key, style));
                out.push_str(match style {
                    Style::Keys => " = ",
                    Style::Flags(_) => " ",
                    Style::Keywords => "=",
                });
                out.push_str(value);
            }
        }
        rest = &after[close + CLOSE.len_utf8()..];
    }
    out.push_str(rest);
    out
}

/// A scheduler error as a message naming its options (`--alpha applies only to --scheduler
/// creasy` on the command line).
pub fn policy_error(error: &PolicyError) -> String {
    match error {
        PolicyError::Unknown { kind, name, known } => {
            format!("unknown {} \"{name}\"; known: {known}", kind_key(*kind))
        }
        PolicyError::NotTaken {
            param,
            kind,
            takers,
        } => format!(
            "{} applies only to {} {takers}",
            key(param),
            kind_key(*kind)
        ),
        PolicyError::UnknownParam {
            key: unknown,
            known,
        } => {
            format!(
                "unknown scheduler parameter {}; known: {known}",
                key(unknown)
            )
        }
        PolicyError::BadValue(bad) => marked(&bad.message, &bad.keys),
        PolicyError::PredictorUnused {
            predictor,
            backfill,
            takers,
        } => format!(
            "{} needs a backfilling rule that plans with predictions ({takers}); {} plans with user estimates, the only runtimes its reservations can rely on",
            key_value("predictor", predictor),
            key_value("backfill", backfill)
        ),
        PolicyError::OrderUnused { order, backfill } => format!(
            "{} orders the queue itself (its decider switches between FCFS, SJF and LJF); it cannot take {}",
            key_value("backfill", backfill),
            key_value("order", order)
        ),
    }
}

/// `message` with each of `keys` marked where it stands as a word of its own.
fn marked(message: &str, keys: &[&str]) -> String {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    'scan: while !rest.is_empty() {
        for k in keys {
            let before_ok = !out.chars().next_back().is_some_and(is_word);
            if before_ok
                && rest.starts_with(k)
                && !rest[k.len()..].chars().next().is_some_and(is_word)
            {
                out.push_str(&key(k));
                rest = &rest[k.len()..];
                continue 'scan;
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

fn kind_key(kind: PartKind) -> String {
    key(kind.key())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Flags as the option tables make them for these keys (the key with `-` for `_`).
    fn flag_of(key: &str) -> String {
        format!("--{}", key.replace('_', "-"))
    }

    #[test]
    fn each_style_names_keys_its_way() {
        let text = format!(
            "{} needs a machine of nodes ({})",
            key_value("bandwidth_mix", "\"high\""),
            key("node_processors")
        );
        assert_eq!(
            render(&text, Style::Flags(flag_of)),
            "--bandwidth-mix \"high\" needs a machine of nodes (--node-processors)"
        );
        assert_eq!(
            render(&text, Style::Keywords),
            "bandwidth_mix=\"high\" needs a machine of nodes (node_processors)"
        );
        assert_eq!(
            render(&text, Style::Keys),
            "bandwidth_mix = \"high\" needs a machine of nodes (node_processors)"
        );
        assert_eq!(render("plain", Style::Flags(flag_of)), "plain");
        assert_eq!(render("\u{1}open", Style::Flags(flag_of)), "open");
    }

    #[test]
    fn a_refused_value_names_its_keys_as_words() {
        let bad = cluster::BadValue::new(
            "dynP bounds must satisfy 0 <= dynp_lower <= dynp_upper, got 5 and 3",
            &["dynp_lower", "dynp_upper"],
        );
        assert_eq!(
            render(&marked(&bad.message, &bad.keys), Style::Flags(flag_of)),
            "dynP bounds must satisfy 0 <= --dynp-lower <= --dynp-upper, got 5 and 3"
        );
        assert_eq!(
            render(
                &marked("alphabet alpha_x alpha.", &["alpha"]),
                Style::Flags(flag_of)
            ),
            "alphabet alpha_x --alpha."
        );
    }

    #[test]
    fn scheduler_errors_name_flags_on_the_command_line() {
        let e = schedulers::REGISTRY
            .spec(
                "easy",
                &cluster::ParamValues::from_iter([("alpha".to_string(), 3.0.into())]),
            )
            .err()
            .map(|e| render(&policy_error(&e), Style::Flags(flag_of)));
        assert_eq!(
            e.as_deref(),
            Some("--alpha applies only to --scheduler creasy")
        );
    }
}
