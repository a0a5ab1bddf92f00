//! A scheduler part's parameters: each part owns a serde struct of its keys ([`PartParams`]), as
//! a user kind owns its keys of a `[[groups]]` table. Front ends hand over the keys given for a
//! scheduler as one table ([`ParamValues`]: a population file's `[scheduler]` keys, flags,
//! Python keywords, a sweep's values); composing a scheduler ([`crate::SchedulerSpec::compose`])
//! gives each part the keys its struct declares, refuses keys no part of the scheduler takes,
//! fills in the struct's defaults and checks the values. The core knows no parameter by name.

use std::any::Any;
use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// The parameter values given for a scheduler, by key (`alpha = 1500`, `quality = "art"`); a key
/// left out takes its part's default.
pub type ParamValues = toml::Table;

/// One parameter's value as given (a number, a whole number, a name).
pub type ParamValue = toml::Value;

/// A value its part refuses: the message, and the keys it names (front ends say them in their
/// own words: `--alpha` on the command line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadValue {
    /// What is wrong (`alpha must be a finite number >= 0, got -5`), naming keys bare.
    pub message: String,
    /// The keys the message names, as written in it.
    pub keys: Vec<&'static str>,
}

impl BadValue {
    /// A message naming `keys`.
    pub fn new(message: impl Into<String>, keys: &[&'static str]) -> BadValue {
        BadValue {
            message: message.into(),
            keys: keys.to_vec(),
        }
    }
}

/// A part's parameters: a plain serde struct whose fields are its keys, every field defaulted
/// (`#[serde(default, deny_unknown_fields)]` on a struct implementing `Default`). Its doc
/// comments say each key's meaning, unit and default.
pub trait PartParams:
    Serialize
    + DeserializeOwned
    + schemars::JsonSchema
    + Clone
    + Debug
    + PartialEq
    + Default
    + Send
    + Sync
    + 'static
{
    /// The keys the part's label writes, in order (`creasy-6000`): by default every key.
    fn labelled() -> &'static [&'static str] {
        serde_aux::serde_introspection::serde_introspect::<Self>()
    }

    /// Whether a key left out still shows (as `null`) where the site is written back (its
    /// summary): plain values do; a whole section (the Slurm model's) does not.
    const SHOWN_WHEN_NOT_GIVEN: bool = true;

    /// Checks the values for the part named `part` (a struct shared by parts may check each
    /// its way) and completes what they imply (the Slurm model resolves its configuration).
    fn check(&mut self, part: &str) -> Result<(), BadValue> {
        let _ = part;
        Ok(())
    }
}

/// The object-safe face of a part's checked [`PartParams`], as a scheduler spec holds it.
pub trait AnyParams: Debug + Send + Sync {
    /// The values of its keys (a key whose value is `None` left out).
    fn values(&self) -> ParamValues;
    /// A copy.
    fn clone_box(&self) -> Box<dyn AnyParams>;
    /// Whether `other` holds the same values.
    fn same_as(&self, other: &dyn AnyParams) -> bool;
    /// For the part that knows the concrete struct.
    fn as_any(&self) -> &dyn Any;
}

impl<P: PartParams> AnyParams for P {
    fn values(&self) -> ParamValues {
        match toml::Value::try_from(self) {
            Ok(toml::Value::Table(table)) => table,
            _ => ParamValues::new(),
        }
    }
    fn clone_box(&self) -> Box<dyn AnyParams> {
        Box::new(self.clone())
    }
    fn same_as(&self, other: &dyn AnyParams) -> bool {
        other.as_any().downcast_ref::<P>() == Some(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Clone for Box<dyn AnyParams> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

impl PartialEq for Box<dyn AnyParams> {
    fn eq(&self, other: &Self) -> bool {
        self.same_as(other.as_ref())
    }
}

impl dyn AnyParams + '_ {
    /// The parameters as `P` (the struct its part declared); `P`'s defaults if they are not.
    pub fn get<P: PartParams>(&self) -> P {
        self.as_any()
            .downcast_ref::<P>()
            .cloned()
            .unwrap_or_default()
    }
}

/// What a part takes: no parameters, or the keys of its [`PartParams`] struct (in a registry
/// entry: `params: Params::of::<CreasyParams>()`).
#[derive(Debug, Clone, Copy)]
pub struct Params {
    /// Its keys, in declaration order.
    pub keys: fn() -> &'static [&'static str],
    /// The keys its label writes, in order.
    pub labelled: fn() -> &'static [&'static str],
    /// Whether its keys left out show as `null` where the site is written back.
    pub shown_when_not_given: bool,
    /// The JSON schema of its keys (their types, defaults and doc comments), for the reference.
    pub schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
    /// Reads its keys from the values given (none else), fills in the defaults and checks
    /// them for the part named by the second argument.
    parse: ParseFn,
}

/// Reads a part's keys from the values given and checks them for the part it names.
type ParseFn = fn(&ParamValues, &str) -> Result<Box<dyn AnyParams>, BadValue>;

/// A part without parameters.
#[derive(
    Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema, Default,
)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl PartParams for NoParams {}

impl Params {
    /// A part without parameters.
    pub const NONE: Params = Params::of::<NoParams>();

    /// A part whose parameters are `P`.
    pub const fn of<P: PartParams>() -> Params {
        Params {
            keys: serde_aux::serde_introspection::serde_introspect::<P>,
            labelled: P::labelled,
            shown_when_not_given: P::SHOWN_WHEN_NOT_GIVEN,
            schema: <P as schemars::JsonSchema>::json_schema,
            parse: parse::<P>,
        }
    }

    /// Whether the part takes `key`.
    pub fn takes(&self, key: &str) -> bool {
        (self.keys)().contains(&key)
    }

    /// The checked parameters of the part named `part` from `given` (only its own keys are
    /// read; the caller refuses the others).
    pub fn parse(&self, given: &ParamValues, part: &str) -> Result<Box<dyn AnyParams>, BadValue> {
        (self.parse)(given, part)
    }
}

/// [`Params::parse`] of `P`: its keys of `given`, deserialized; a value of the wrong type is
/// reported with its key.
fn parse<P: PartParams>(given: &ParamValues, part: &str) -> Result<Box<dyn AnyParams>, BadValue> {
    let keys = serde_aux::serde_introspection::serde_introspect::<P>();
    let own: ParamValues = given
        .iter()
        .filter(|(key, _)| keys.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let mut params = match P::deserialize(toml::Value::Table(own.clone())) {
        Ok(params) => params,
        Err(whole) => {
            // Name the key whose value is wrong: the first that fails alone.
            for key in keys {
                let Some(value) = own.get(*key) else { continue };
                let alone = ParamValues::from_iter([(key.to_string(), value.clone())]);
                if let Err(e) = P::deserialize(toml::Value::Table(alone)) {
                    return Err(BadValue::new(format!("{key}: {}", e.message()), &[key]));
                }
            }
            return Err(BadValue::new(whole.message().to_string(), &[]));
        }
    };
    params.check(part)?;
    Ok(Box::new(params))
}

/// A label's text of a parameter value as a value (`6000` an integer, `0.25` a number, `art` a
/// name), for [`Params::parse`].
pub fn value_of_label(text: &str) -> toml::Value {
    if let Ok(whole) = text.parse::<i64>() {
        toml::Value::Integer(whole)
    } else if let Ok(number) = text.parse::<f64>() {
        toml::Value::Float(number)
    } else {
        toml::Value::String(text.to_string())
    }
}

/// A parameter value as a label writes it (`6000`, `1500.5`, `artww`).
pub fn label_of_value(value: &toml::Value) -> String {
    match value {
        toml::Value::String(text) => text.clone(),
        toml::Value::Integer(whole) => whole.to_string(),
        toml::Value::Float(number) => number.to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed test should panic

    use super::*;

    /// A toy part's parameters.
    #[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
    #[serde(default, deny_unknown_fields)]
    struct Toy {
        weight: f64,
        name: String,
    }

    impl Default for Toy {
        fn default() -> Self {
            Toy {
                weight: 2.0,
                name: "plain".into(),
            }
        }
    }

    impl PartParams for Toy {
        fn check(&mut self, _part: &str) -> Result<(), BadValue> {
            if self.weight < 0.0 {
                return Err(BadValue::new(
                    format!("weight must be >= 0, got {}", self.weight),
                    &["weight"],
                ));
            }
            Ok(())
        }
    }

    #[test]
    fn a_part_reads_its_keys_with_defaults_and_checks_them() {
        let spec = Params::of::<Toy>();
        assert_eq!((spec.keys)(), ["weight", "name"]);
        assert!(spec.takes("weight") && !spec.takes("alpha"));
        let given = ParamValues::from_iter([
            ("weight".to_string(), toml::Value::Integer(3)),
            ("other".to_string(), toml::Value::Integer(1)),
        ]);
        let params = spec.parse(&given, "toy").unwrap();
        assert_eq!(
            params.get::<Toy>(),
            Toy {
                weight: 3.0,
                name: "plain".into()
            }
        );
        assert_eq!(params.values()["name"].as_str(), Some("plain"));
        let bad = ParamValues::from_iter([("weight".to_string(), toml::Value::Integer(-1))]);
        assert_eq!(
            spec.parse(&bad, "toy").unwrap_err().message,
            "weight must be >= 0, got -1"
        );
        let wrong = ParamValues::from_iter([("name".to_string(), toml::Value::Integer(1))]);
        let e = spec.parse(&wrong, "toy").unwrap_err();
        assert!(e.message.starts_with("name: invalid type"), "{}", e.message);
        assert_eq!(e.keys, ["name"]);
    }

    #[test]
    fn label_values_round_trip() {
        for text in ["6000", "1500.5", "0.25", "artww", "-3"] {
            assert_eq!(label_of_value(&value_of_label(text)), text);
        }
    }
}
