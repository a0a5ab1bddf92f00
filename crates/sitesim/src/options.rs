//! `run`'s, `validate`'s and `replay`'s flags, built from the scenario layer's option tables
//! (`config::options`): one clap argument per option, parsed by the option's own parser, so a
//! flag and a Python keyword take the same values with the same messages.

use std::marker::PhantomData;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _, ValueParser};
use clap::{Arg, ArgAction, ArgMatches, Args, FromArgMatches};
use config::options::{self, Kind, OptionSpec, Values};

/// An option table of the command line.
pub trait Table {
    /// Its options, in `--help`'s order.
    fn options() -> Vec<&'static OptionSpec>;
}

/// `validate`'s options: a site's.
#[derive(Debug)]
pub struct Site;
/// `run`'s options: a site's, then what it measures and writes.
#[derive(Debug)]
pub struct Run;
/// `replay`'s options.
#[derive(Debug)]
pub struct Replay;

impl Table for Site {
    fn options() -> Vec<&'static OptionSpec> {
        options::SITE.iter().collect()
    }
}
impl Table for Run {
    fn options() -> Vec<&'static OptionSpec> {
        options::run_options().collect()
    }
}
impl Table for Replay {
    fn options() -> Vec<&'static OptionSpec> {
        options::REPLAY.iter().collect()
    }
}

/// How a trace file is read (`replay`'s format and sacct options), for `fit` and `convert`.
#[derive(Debug)]
pub struct TraceInput;

impl Table for TraceInput {
    fn options() -> Vec<&'static OptionSpec> {
        options::trace_input_options().collect()
    }
}

/// The options of table `T` given on the command line.
#[derive(Debug)]
pub struct TableArgs<T> {
    /// Each option given, with its value.
    pub values: Values,
    table: PhantomData<T>,
}

impl<T> TableArgs<T> {
    /// Whether the switch `key` was given.
    pub fn switch(&self, key: &str) -> bool {
        options::switch(&self.values, key)
    }

    /// The path given for `key`.
    pub fn path(&self, key: &str) -> Option<std::path::PathBuf> {
        options::path(&self.values, key)
    }
}

/// The clap argument of `option`.
fn argument(option: &'static OptionSpec) -> Arg {
    let mut help = option.help.to_string();
    help.push('.');
    if let Some(default) = options::default_text(option) {
        help.push_str(&format!(" Default: {default}."));
    }
    let mut arg = Arg::new(option.key).help(help);
    arg = if option.positional {
        arg.required(true)
    } else {
        // Built once per process, for the life of the command line.
        arg.long(option.flag_name().leak() as &'static str)
    };
    if let Some(short) = option.short() {
        arg = arg.short(short);
    }
    let value_name: &'static str = match option.value_name {
        Some(name) => name,
        None => option.key.to_uppercase().leak(),
    };
    arg = arg.value_name(value_name);
    match option.kind {
        Kind::Switch => arg.action(ArgAction::SetTrue),
        Kind::Choice(names) => arg.value_parser(
            PossibleValuesParser::new(
                names()
                    .into_iter()
                    .map(|n| PossibleValue::new(n.name).help(n.help).hide(!n.listed)),
            )
            .try_map(move |text: String| option.parse_text(&text)),
        ),
        Kind::Modes => arg
            .action(ArgAction::Append)
            .value_parser(ValueParser::new(move |text: &str| option.parse_text(text))),
        _ => arg.value_parser(ValueParser::new(move |text: &str| option.parse_text(text))),
    }
}

impl<T: Table> Args for TableArgs<T> {
    fn augment_args(mut cmd: clap::Command) -> clap::Command {
        for option in T::options() {
            cmd = cmd.arg(argument(option));
        }
        // The outputs written only on request need a directory to go into.
        if T::options().iter().any(|o| o.key == "batsim_jobs") {
            cmd = cmd.mut_arg("batsim_jobs", |a| a.requires("out"));
        }
        cmd
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl<T: Table> FromArgMatches for TableArgs<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut values = Values::new();
        for option in T::options() {
            let given =
                matches.value_source(option.key) == Some(clap::parser::ValueSource::CommandLine);
            if !given {
                continue;
            }
            let value = match option.kind {
                Kind::Switch => toml::Value::Boolean(matches.get_flag(option.key)),
                Kind::Modes => toml::Value::Array(
                    matches
                        .get_many::<toml::Value>(option.key)
                        .map(|v| v.cloned().collect())
                        .unwrap_or_default(),
                ),
                _ => match matches.get_one::<toml::Value>(option.key) {
                    Some(value) => value.clone(),
                    None => continue,
                },
            };
            values.push((option, value));
        }
        Ok(TableArgs {
            values,
            table: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}
