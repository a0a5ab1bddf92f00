//! Slurm's TRES arithmetic: a job's billing (`TRESBillingWeights`, `PriorityFlags=MAX_TRES` /
//! `MAX_TRES_GRES`) and the TRES priority factor (`PriorityWeightTRES`), as pure functions.
//!
//! Ported from Slurm 26.05.3 (tag `slurm-26-05-3-1`). The parsing and TRES factor functions
//! cited are unchanged since `slurm-22-05-11-1`; 22.05's `assoc_mgr_tres_weighted` differs
//! only in having no `MAX_TRES_GRES` (added in 25.05, as the slurm.conf man page says), and
//! its usage function is `decay_apply_new_usage`:
//!
//! - Parsing a weight list: `src/common/slurm_protocol_api.c`, `slurm_get_tres_weight_array`
//!   and `_tres_weight_item` (both `TRESBillingWeights` and `PriorityWeightTRES` go through
//!   them), with the unit suffix of `get_convert_unit_val` / `get_unit_type` (same file) and
//!   `slurmdb_get_tres_base_unit` (`src/common/slurmdb_defs.c`); TRES names are matched
//!   case-insensitively, type and name, by `assoc_mgr_find_tres_pos`
//!   (`src/common/assoc_mgr.c`).
//! - Billing: `assoc_mgr_tres_weighted` (`src/common/assoc_mgr.c`), called by
//!   `calc_job_billable_tres` (`src/slurmctld/job_mgr.c`, which bills the CPUs when the
//!   partition has no weights); `job_set_alloc_tres` (same file) stores it in the job's
//!   `tres_alloc_cnt[TRES_ARRAY_BILLING]`, a `uint64_t`, so truncated; fair-share usage is
//!   charged with the unrounded double (`_apply_new_usage` in
//!   `src/plugins/priority/multifactor/priority_multifactor.c`).
//! - The TRES priority factor: `_get_tres_factors` and `_get_tres_prio_weighted`
//!   (`src/plugins/priority/multifactor/priority_multifactor.c`), with the partition's totals
//!   of `_calc_part_tres` (`src/slurmctld/partition_mgr.c`).
//!
//! Amounts are Slurm's: counts for CPUs, nodes, GRES and licences, MiB for memory and burst
//! buffers. What the model leaves to its caller: which TRES are tracked
//! (`AccountingStorageTRES`; any known TRES type is accepted here, where Slurm accepts only the
//! configured ones), and listing a typed GRES under both its names (a job given
//! `--gres=gpu:a100:1` holds `gres/gpu=1` and `gres/gpu:a100=1` when both are tracked, and a
//! weight on each bills both).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Why a `TRESBillingWeights` or `PriorityWeightTRES` list cannot be read. Each names the item
/// (`TYPE[/NAME]=WEIGHT`) at fault; Slurm rejects the whole list for one bad item
/// (`slurm_get_tres_weight_array`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TresWeightsError {
    /// No `=` or nothing after it (`_tres_weight_item`: "is an invalid TRES weight entry").
    #[error("TRES weight \"{item}\": expected TYPE[/NAME]=WEIGHT")]
    MissingWeight {
        /// The item as given.
        item: String,
    },
    /// Not a TRES Slurm knows (it would also reject one not in `AccountingStorageTRES`).
    #[error(
        "TRES weight \"{item}\": \"{tres}\" is not a TRES (cpu, mem, node, energy, vmem, pages, billing, or gres/, license/, bb/, fs/, ic/ with a name)"
    )]
    UnknownTres {
        /// The item as given.
        item: String,
        /// The TRES named by the item.
        tres: String,
    },
    /// The weight does not start with a decimal number (`strtod`), or is not finite.
    #[error("TRES weight \"{item}\": \"{value}\" is not a finite decimal number")]
    NotANumber {
        /// The item as given.
        item: String,
        /// The text after `=`.
        value: String,
    },
    /// A unit T or P on a TRES counted from none (all but `mem` and `bb`): its divisor,
    /// 1024^4 or 1024^5, overflows the C `int` of `get_convert_unit_val` (undefined
    /// behaviour; with wrapping arithmetic T leaves the weight as it is and P divides it by
    /// 1024), so the weight has no defined meaning in Slurm.
    #[error(
        "TRES weight \"{item}\": unit '{unit}' overflows Slurm's unit conversion for this TRES (K, M, G or none only)"
    )]
    UnitOverflow {
        /// The item as given.
        item: String,
        /// The unit character.
        unit: char,
    },
    /// The character after the number is not a unit (`get_unit_type`: K, M, G, T or P, either
    /// case).
    #[error("TRES weight \"{item}\": unit '{unit}' is not one of K, M, G, T, P")]
    BadUnit {
        /// The item as given.
        item: String,
        /// The character after the number.
        unit: char,
    },
}

/// The type of a TRES (`slurmdb_tres_rec_t.type`), in the order of Slurm's fixed TRES ids
/// (cpu 1, mem 2, energy 3, node 4, billing 5, fs/disk 6, vmem 7, pages 8), then the types
/// whose TRES Slurm numbers as they are created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TresType {
    /// `cpu`: a count of CPUs.
    Cpu,
    /// `mem`: memory, MiB.
    Mem,
    /// `energy`: joules.
    Energy,
    /// `node`: a count of nodes.
    Node,
    /// `billing`: the result of the billing weights (ignored as a billing weight).
    Billing,
    /// `fs/NAME` (`fs/disk`, `fs/lustre`).
    Fs,
    /// `vmem`: virtual memory.
    Vmem,
    /// `pages`.
    Pages,
    /// `gres/NAME`: a generic resource, `gres/gpu` or typed `gres/gpu:a100`; counts.
    Gres,
    /// `license/NAME`: a count of licences (a global TRES).
    License,
    /// `bb/NAME`: a burst buffer, MiB (a global TRES).
    Bb,
    /// `ic/NAME` (`ic/ofed`).
    Ic,
}

impl TresType {
    /// The type named `name` (case-insensitive, as `xstrcasecmp`), and whether a TRES of it
    /// needs a name after `/`.
    fn parse(name: &str) -> Option<(TresType, bool)> {
        let known = match name.to_ascii_lowercase().as_str() {
            "cpu" => (TresType::Cpu, false),
            "mem" => (TresType::Mem, false),
            "energy" => (TresType::Energy, false),
            "node" => (TresType::Node, false),
            "billing" => (TresType::Billing, false),
            "vmem" => (TresType::Vmem, false),
            "pages" => (TresType::Pages, false),
            "fs" => (TresType::Fs, true),
            "gres" => (TresType::Gres, true),
            "license" => (TresType::License, true),
            "bb" => (TresType::Bb, true),
            "ic" => (TresType::Ic, true),
            _ => return None,
        };
        Some(known)
    }

    /// The type as Slurm spells it in a TRES string.
    pub fn as_str(self) -> &'static str {
        match self {
            TresType::Cpu => "cpu",
            TresType::Mem => "mem",
            TresType::Energy => "energy",
            TresType::Node => "node",
            TresType::Billing => "billing",
            TresType::Fs => "fs",
            TresType::Vmem => "vmem",
            TresType::Pages => "pages",
            TresType::Gres => "gres",
            TresType::License => "license",
            TresType::Bb => "bb",
            TresType::Ic => "ic",
        }
    }

    /// The unit a weight's suffix is counted from (`slurmdb_get_tres_base_unit`): MiB
    /// (`UNIT_MEGA`, 2 steps of 1024 above none) for `mem` and `bb`, none (0) otherwise.
    fn base_unit(self) -> u32 {
        match self {
            TresType::Mem | TresType::Bb => 2,
            _ => 0,
        }
    }

    /// Whether `MAX_TRES` counts it among the node TRES, whose weighted amounts are maxed
    /// (`assoc_mgr_tres_weighted`: `TRES_ARRAY_CPU`, `TRES_ARRAY_MEM`, `TRES_ARRAY_NODE` and
    /// every TRES of type `gres`); all others (licences, burst buffers, energy...) are
    /// global and summed.
    pub fn is_node_tres(self) -> bool {
        matches!(
            self,
            TresType::Cpu | TresType::Mem | TresType::Node | TresType::Gres
        )
    }
}

/// One weight: a TRES (type and lower-case name) and its weight per base unit.
#[derive(Debug, Clone, PartialEq)]
struct Weight {
    kind: TresType,
    /// Lower-case, empty for a type without names (`gpu:a100` for `gres/gpu:a100`).
    name: String,
    /// Per unit of the TRES: per CPU, node, GRES or licence, per MiB of memory or burst
    /// buffer, after the suffix's division.
    weight: f64,
}

impl Weight {
    /// `type` or `type/name`, lower case.
    fn tres(&self) -> String {
        if self.name.is_empty() {
            self.kind.as_str().to_string()
        } else {
            format!("{}/{}", self.kind.as_str(), self.name)
        }
    }
}

/// A list of TRES weights as `slurm_get_tres_weight_array` reads it: a partition's
/// `TRESBillingWeights` ([`BillingWeights`]) or `PriorityWeightTRES`
/// ([`PriorityWeightsTres`]), e.g. `CPU=1.0,Mem=0.25G,GRES/gpu=2.0,license/licA=1.5`.
///
/// - Items are split at `,` (empty items skipped, as `strtok_r` skips them), each at its
///   first `=`, the TRES at its first `/`: `GRES/gpu:a100=3` weighs the typed GRES
///   `gpu:a100`. Type and name are case-insensitive (`assoc_mgr_find_tres_pos` compares both
///   with `xstrcasecmp`); a TRES given twice keeps its last weight.
/// - A weight is a decimal number (`strtod`; negative weights are accepted, as the slurm.conf
///   man page says of `PriorityWeightTRES`), optionally followed by a unit K, M, G, T or P
///   (either case). The suffix divides the weight by 1024 for each step from the TRES's base
///   unit up to it (`get_convert_unit_val`): memory and burst buffers count in MiB, so
///   `Mem=0.25G` is 0.25 per GiB = 0.25/1024 per MiB, and K or M leave their weight as it is;
///   other TRES count from none, so `CPU=1K` is 1/1024 per CPU. Slurm computes the divisor in
///   a C `int`, which T and P overflow for TRES counted from none: undefined behaviour, so
///   an error here ([`TresWeightsError::UnitOverflow`]). As `strtod`, only the first
///   character after the number is read (`0.25GB` is `0.25G`).
/// - Stricter than Slurm: a weight with no number before its unit (`strtod` reads 0 from
///   `CPU=G`) and a non-finite one (`inf`, `nan`) are errors.
/// - An empty list is no list (`slurm_get_tres_weight_array` returns NULL): no billing
///   weights bill the CPUs, no `PriorityWeightTRES` gives no TRES factor. A list of only
///   commas is a list of no weights (every weight 0).
///
/// Written back ([`fmt::Display`]) as `type[/name]=weight` items, lower case, weights per
/// base unit (`Mem=0.25G` becomes `mem=0.000244140625`), which read back to the same list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(try_from = "String", into = "String")]
pub struct TresWeights {
    /// `None`: no list was given (the empty string).
    weights: Option<Vec<Weight>>,
}

/// A partition's `TRESBillingWeights`; [`TresWeights::default`] is none (bill the CPUs).
pub type BillingWeights = TresWeights;

/// `PriorityWeightTRES`; [`TresWeights::default`] is none (no TRES factor).
pub type PriorityWeightsTres = TresWeights;

impl TresWeights {
    /// Reads a weight list (see [`TresWeights`]); the empty string is no list.
    pub fn parse(text: &str) -> Result<TresWeights, TresWeightsError> {
        if text.is_empty() {
            return Ok(TresWeights::default());
        }
        let mut weights: Vec<Weight> = Vec::new();
        for item in text.split(',').filter(|item| !item.is_empty()) {
            let weight = parse_item(item)?;
            match weights
                .iter_mut()
                .find(|w| w.kind == weight.kind && w.name == weight.name)
            {
                Some(old) => old.weight = weight.weight,
                None => weights.push(weight),
            }
        }
        weights.sort_by(|a, b| (a.kind, &a.name).cmp(&(b.kind, &b.name)));
        Ok(TresWeights {
            weights: Some(weights),
        })
    }

    /// Whether no list was given (billing is then the CPU count, the TRES factor 0).
    pub fn is_unset(&self) -> bool {
        self.weights.is_none()
    }

    /// The weight of TRES `tres` (`cpu`, `mem`, `gres/gpu:a100`..., case-insensitive) per
    /// base unit (per CPU, per MiB of memory...); `None` when the list does not weigh it
    /// (Slurm's weight is then 0).
    pub fn get(&self, tres: &str) -> Option<f64> {
        let (kind, name) = split_tres(tres)?;
        self.weights
            .as_deref()?
            .iter()
            .find(|w| w.kind == kind && w.name == name)
            .map(|w| w.weight)
    }

    /// The weights, as (`type[/name]` in lower case, weight per base unit), in Slurm's TRES
    /// order for the fixed TRES, then by type and name.
    pub fn iter(&self) -> impl Iterator<Item = (String, f64)> + '_ {
        self.weights.iter().flatten().map(|w| (w.tres(), w.weight))
    }

    fn items(&self) -> &[Weight] {
        self.weights.as_deref().unwrap_or_default()
    }
}

impl FromStr for TresWeights {
    type Err = TresWeightsError;

    fn from_str(text: &str) -> Result<TresWeights, TresWeightsError> {
        TresWeights::parse(text)
    }
}

impl TryFrom<String> for TresWeights {
    type Error = TresWeightsError;

    fn try_from(text: String) -> Result<TresWeights, TresWeightsError> {
        TresWeights::parse(&text)
    }
}

impl From<TresWeights> for String {
    fn from(weights: TresWeights) -> String {
        weights.to_string()
    }
}

impl fmt::Display for TresWeights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.weights {
            None => Ok(()),
            // No weights, but a list: written as Slurm reads it (one empty item).
            Some(weights) if weights.is_empty() => f.write_str(","),
            Some(weights) => {
                for (i, w) in weights.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}={}", w.tres(), w.weight)?;
                }
                Ok(())
            }
        }
    }
}

/// `type` or `type/name` as a TRES type and lower-case name (empty for a type without
/// names); `None` when it is not a TRES.
fn split_tres(tres: &str) -> Option<(TresType, String)> {
    let (kind, name) = match tres.split_once('/') {
        Some((kind, name)) => (kind, Some(name)),
        None => (tres, None),
    };
    let (kind, named) = TresType::parse(kind)?;
    match (named, name) {
        (true, Some(name)) if !name.is_empty() => Some((kind, name.to_ascii_lowercase())),
        (false, None) => Some((kind, String::new())),
        _ => None,
    }
}

/// One `TYPE[/NAME]=WEIGHT[UNIT]` item (`_tres_weight_item`).
fn parse_item(item: &str) -> Result<Weight, TresWeightsError> {
    let missing = || TresWeightsError::MissingWeight {
        item: item.to_string(),
    };
    let (tres, value) = item.split_once('=').ok_or_else(missing)?;
    if tres.is_empty() || value.is_empty() {
        return Err(missing());
    }
    let (kind, name) = split_tres(tres).ok_or_else(|| TresWeightsError::UnknownTres {
        item: item.to_string(),
        tres: tres.to_string(),
    })?;
    let not_a_number = || TresWeightsError::NotANumber {
        item: item.to_string(),
        value: value.to_string(),
    };
    // strtod skips leading white space.
    let number = value.trim_start();
    let length = decimal_prefix(number);
    let mut weight: f64 = number[..length].parse().map_err(|_| not_a_number())?;
    if length == 0 || !weight.is_finite() {
        return Err(not_a_number());
    }
    if let Some(unit) = number[length..].chars().next() {
        let step: u32 = match unit.to_ascii_uppercase() {
            'K' => 1,
            'M' => 2,
            'G' => 3,
            'T' => 4,
            'P' => 5,
            _ => {
                return Err(TresWeightsError::BadUnit {
                    item: item.to_string(),
                    unit,
                });
            }
        };
        // get_convert_unit_val: 1024 per step above the base unit (none at or below it), in
        // a C int, which 1024^4 overflows.
        let steps = step.saturating_sub(kind.base_unit());
        if steps >= 4 {
            return Err(TresWeightsError::UnitOverflow {
                item: item.to_string(),
                unit,
            });
        }
        if steps > 0 {
            weight /= f64::from(1024_u32.pow(steps));
        }
    }
    Ok(Weight { kind, name, weight })
}

/// The length of the decimal number at the start of `text` as `strtod` reads it: a sign,
/// digits with at most one `.` (at least one digit), an exponent only when digits follow
/// its `e`. 0 when there is none.
fn decimal_prefix(text: &str) -> usize {
    let bytes = text.as_bytes();
    let digits_from = |mut i: usize| {
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let integer_end = digits_from(i);
    let mut digits = integer_end - i;
    i = integer_end;
    if bytes.get(i) == Some(&b'.') {
        let fraction_end = digits_from(i + 1);
        digits += fraction_end - (i + 1);
        i = fraction_end;
    }
    if digits == 0 {
        return 0;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(bytes.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exponent_end = digits_from(j);
        if exponent_end > j {
            i = exponent_end;
        }
    }
    i
}

/// Amounts of TRES: a job's allocation (`tres_alloc_cnt`) or request (`tres_req_cnt`), or a
/// partition's totals (`part_ptr->tres_cnt`). Names are matched case-insensitively.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tres {
    /// CPUs (`cpu`).
    pub cpu: u64,
    /// Memory, MiB (`mem`; a job's total over its nodes).
    pub mem: u64,
    /// Nodes (`node`).
    pub node: u64,
    /// Generic resources by name (`gpu`, typed `gpu:a100`): counts. A typed GRES is listed
    /// under both names when both are tracked, as Slurm's allocation counts it.
    pub gres: BTreeMap<String, u64>,
    /// Licences by name (`licA`): counts.
    pub licenses: BTreeMap<String, u64>,
    /// Any other TRES by its full name (`bb/cray` in MiB, `energy`, `fs/disk`, `billing`).
    pub other: BTreeMap<String, u64>,
}

impl Tres {
    /// Amounts of `cpu` CPUs, `mem` MiB and `node` nodes, and nothing else.
    pub fn new(cpu: u64, mem: u64, node: u64) -> Tres {
        Tres {
            cpu,
            mem,
            node,
            ..Tres::default()
        }
    }

    /// With `count` of GRES `name` (`gpu`, `gpu:a100`).
    pub fn with_gres(mut self, name: &str, count: u64) -> Tres {
        self.gres.insert(name.to_string(), count);
        self
    }

    /// With `count` licences `name`.
    pub fn with_license(mut self, name: &str, count: u64) -> Tres {
        self.licenses.insert(name.to_string(), count);
        self
    }

    /// With `amount` of TRES `tres` (its full name: `bb/cray`, `energy`...).
    pub fn with_other(mut self, tres: &str, amount: u64) -> Tres {
        self.other.insert(tres.to_string(), amount);
        self
    }

    /// The amount of TRES `tres` (`cpu`, `mem`, `gres/gpu:a100`, `license/licA`,
    /// case-insensitive); 0 for one not held or not a TRES.
    pub fn amount(&self, tres: &str) -> u64 {
        match split_tres(tres) {
            Some((kind, name)) => self.amount_of(kind, &name),
            None => 0,
        }
    }

    fn amount_of(&self, kind: TresType, name: &str) -> u64 {
        let find = |map: &BTreeMap<String, u64>, key: &str| {
            map.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .map_or(0, |(_, v)| *v)
        };
        match kind {
            TresType::Cpu => self.cpu,
            TresType::Mem => self.mem,
            TresType::Node => self.node,
            TresType::Gres => find(&self.gres, name),
            TresType::License => find(&self.licenses, name),
            _ if name.is_empty() => find(&self.other, kind.as_str()),
            _ => find(&self.other, &format!("{}/{}", kind.as_str(), name)),
        }
    }
}

/// How billing combines the weighted TRES: `PriorityFlags`, read by
/// `_validate_and_set_defaults` (`src/common/read_config.c`), which sets `MAX_TRES_GRES` when
/// the flags contain it and `MAX_TRES` only otherwise, so at most one holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BillingMode {
    /// The sum of every weighted TRES (Slurm's default).
    #[default]
    Sum,
    /// `MAX_TRES`: the largest weighted node TRES (CPUs, memory, nodes, GRES) plus the sum of
    /// the global ones (licences, burst buffers, the rest).
    MaxTres,
    /// `MAX_TRES_GRES` (Slurm 25.05 on): the sum of the weighted GRES plus the largest
    /// weighted CPUs, memory or nodes, plus the sum of the global TRES.
    MaxTresGres,
}

impl BillingMode {
    /// The mode a `PriorityFlags` value selects: as `_validate_and_set_defaults`, a
    /// case-insensitive substring search (`xstrcasestr`) for `MAX_TRES_GRES`, then
    /// `MAX_TRES`.
    pub fn from_priority_flags(flags: &str) -> BillingMode {
        let flags = flags.to_ascii_uppercase();
        if flags.contains("MAX_TRES_GRES") {
            BillingMode::MaxTresGres
        } else if flags.contains("MAX_TRES") {
            BillingMode::MaxTres
        } else {
            BillingMode::Sum
        }
    }
}

/// A job's billing (`assoc_mgr_tres_weighted`, through `calc_job_billable_tres`), in billing
/// units, unrounded (what fair-share charges per second): with no weights
/// ([`TresWeights::is_unset`]) the CPUs; otherwise each weighted TRES's amount times its
/// weight (a TRES not weighted counts 0; the `billing` TRES is skipped), combined as `mode`
/// says: all summed ([`BillingMode::Sum`]); the largest node term, at least 0 (Slurm's
/// maximum starts at 0.0), plus the sum of the global ones ([`BillingMode::MaxTres`]); the
/// largest CPU, memory or node term plus the sum of the GRES terms, plus the sum of the
/// global ones ([`BillingMode::MaxTresGres`]). Slurm sums in its TRES array's order; the
/// model sums the weighted TRES in [`TresWeights::iter`]'s order, the same for the fixed
/// TRES (the order can change only the last bits of a sum).
pub fn billing(weights: &BillingWeights, allocated: &Tres, mode: BillingMode) -> f64 {
    if weights.is_unset() {
        return allocated.cpu as f64;
    }
    let mut node = 0.0_f64;
    let mut gres = 0.0;
    let mut global = 0.0;
    for w in weights.items() {
        if w.kind == TresType::Billing {
            continue;
        }
        let value = allocated.amount_of(w.kind, &w.name) as f64 * w.weight;
        match mode {
            BillingMode::MaxTresGres if w.kind == TresType::Gres => gres += value,
            BillingMode::MaxTres | BillingMode::MaxTresGres if w.kind.is_node_tres() => {
                // MAX(to_bill_node, tres_value): `a > b ? a : b`
                if value > node {
                    node = value;
                }
            }
            _ => global += value,
        }
    }
    // to_bill_node += billable_gres (only MAX_TRES_GRES has any); + to_bill_global
    (node + gres) + global
}

/// The billing Slurm stores (`tres_alloc_cnt[TRES_ARRAY_BILLING]`, a `uint64_t` assigned the
/// double in `job_set_alloc_tres`; shown as `billing=` in `AllocTRES`): truncated toward
/// zero, so 4.5 is stored as 4. A negative billing (negative weights) is undefined in C and
/// stored as 0 here.
pub fn stored_billing(billing: f64) -> u64 {
    billing as u64 // truncation toward zero, saturating at 0 and u64::MAX
}

/// What a TRES factor is measured against (`PriorityFlags=NO_NORMAL_TRES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TresNormalisation {
    /// The job's amount over the partition's total of that TRES (Slurm's default).
    #[default]
    Partition,
    /// `NO_NORMAL_TRES`: the job's amount itself.
    None,
}

/// The TRES part of a job's priority in one partition (`_get_tres_factors` then
/// `_get_tres_prio_weighted`): for each weighted TRES, its factor times its weight, summed
/// (0 with no `PriorityWeightTRES`).
///
/// The factor is the job's amount (`job`: its allocation once it has one, else its request;
/// memory in MiB) over the partition's total of the TRES (`partition`, `_calc_part_tres`:
/// the sum over the partition's nodes for CPUs, memory and GRES, its node count for `node`,
/// the cluster's totals for licences and burst buffers); 0 when either is 0. Not clamped
/// (the documentation calls every factor a number from 0 to 1; a job holding more than the
/// partition's total would exceed 1). With [`TresNormalisation::None`] the factor is the
/// job's amount. The weight applies per base unit after its suffix (a `Mem=2000G` weight
/// is 2000/1024 per factor unit); the `billing` TRES is weighed like any other when the
/// caller gives both amounts (the TRES documentation says billing is not available for
/// priority, as a pending job has none yet; the code does not skip it).
///
/// The result is added, unrounded, to the other weighted factors before Slurm truncates the
/// priority once ([`crate::priority::priority`]).
pub fn tres_priority(
    weights: &PriorityWeightsTres,
    job: &Tres,
    partition: &Tres,
    normalisation: TresNormalisation,
) -> f64 {
    weights
        .items()
        .iter()
        .map(|w| tres_factor(job, partition, w.kind, &w.name, normalisation) * w.weight)
        .sum()
}

/// The factor of one TRES (`_get_tres_factors`): `job / partition` (0 when either is 0), or
/// `job` with [`TresNormalisation::None`].
fn tres_factor(
    job: &Tres,
    partition: &Tres,
    kind: TresType,
    name: &str,
    normalisation: TresNormalisation,
) -> f64 {
    let value = job.amount_of(kind, name);
    match normalisation {
        TresNormalisation::None => value as f64,
        TresNormalisation::Partition => {
            let total = partition.amount_of(kind, name);
            if value != 0 && total != 0 {
                value as f64 / total as f64
            } else {
                0.0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1024;

    /// The example partition of `doc/html/tres.shtml` (slurm-26-05-3-1 and master):
    /// `TRESBillingWeights="CPU=1.0,Mem=0.25G,GRES/gpu=2.0,license/licA=1.5"`.
    fn doc_weights() -> BillingWeights {
        match BillingWeights::parse("CPU=1.0,Mem=0.25G,GRES/gpu=2.0,license/licA=1.5") {
            Ok(weights) => weights,
            Err(e) => panic!("{e}"),
        }
    }

    fn parse(text: &str) -> TresWeights {
        match TresWeights::parse(text) {
            Ok(weights) => weights,
            Err(e) => panic!("{text}: {e}"),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// tres.shtml: "A job in this partition that gets allocated 1 CPU and 8 GiB of memory
    /// would be billed as: (1*1.0) + (8*0.25) + (0*2.0) + (0*1.5) = 3.0".
    #[test]
    fn billing_doc_sum_one_cpu_8_gib() {
        let job = Tres::new(1, 8 * GIB, 1);
        let b = billing(&doc_weights(), &job, BillingMode::Sum);
        assert!(close(b, 3.0), "{b}");
        assert_eq!(stored_billing(b), 3);
    }

    /// tres.shtml: "the final billing amount is stored as an integer and truncated if needed
    /// ... adding a license ...: (1*1.0) + (8*0.25) + (0*2.0) + (1*1.5) = 4.5 => 4".
    #[test]
    fn billing_doc_sum_with_a_license_truncates() {
        let job = Tres::new(1, 8 * GIB, 1).with_license("licA", 1);
        let b = billing(&doc_weights(), &job, BillingMode::Sum);
        assert!(close(b, 4.5), "{b}");
        assert_eq!(stored_billing(b), 4);
    }

    /// tres.shtml: "adding additional memory and a license ...: (1*1.0) + (10*0.25) +
    /// (0*2.0) + (1*1.5) = 5.0 => 5".
    #[test]
    fn billing_doc_sum_10_gib_and_a_license() {
        let job = Tres::new(1, 10 * GIB, 1).with_license("licA", 1);
        let b = billing(&doc_weights(), &job, BillingMode::Sum);
        assert!(close(b, 5.0), "{b}");
        assert_eq!(stored_billing(b), 5);
    }

    /// tres.shtml, `PriorityFlags=MAX_TRES`: "Using the same example above, the billable TRES
    /// will be: MAX(1*1.0, 8*0.25, 0*2.0) + (0*1.5) = 2.0".
    #[test]
    fn billing_doc_max_tres() {
        let job = Tres::new(1, 8 * GIB, 1);
        let b = billing(&doc_weights(), &job, BillingMode::MaxTres);
        assert!(close(b, 2.0), "{b}");
        // A licence is global: summed beside the maximum.
        let licensed = job.clone().with_license("licA", 1);
        assert!(close(
            billing(&doc_weights(), &licensed, BillingMode::MaxTres),
            3.5
        ));
        // A GPU is a node TRES under MAX_TRES: max(1, 2, 2) = 2.
        let gpu = job.with_gres("gpu", 1);
        assert!(close(
            billing(&doc_weights(), &gpu, BillingMode::MaxTres),
            2.0
        ));
    }

    /// tres.shtml, `PriorityFlags=MAX_TRES_GRES`: "With this flag set, the billable TRES will
    /// be: (0*2.0) + MAX(1*1.0, 8*0.25) + (0*1.5) = 2.0" (agreed) and "Adding a GPU to the
    /// example job, the billable TRES will be: (1*2.0) + MAX(1*1.0, 8*0.25) + (0*1.5) = 3.0".
    /// The page's own expression is 2.0 + 2.0 + 0.0 = 4.0, and so is
    /// `assoc_mgr_tres_weighted` (`to_bill_node` = max(1.0, 2.0) = 2.0, plus
    /// `billable_gres` 2.0): the page's "3.0" is a slip (since commit 08ad2b7659, 2025-05-14,
    /// still on master); the model follows the code.
    #[test]
    fn billing_doc_max_tres_gres() {
        let job = Tres::new(1, 8 * GIB, 1);
        let b = billing(&doc_weights(), &job, BillingMode::MaxTresGres);
        assert!(close(b, 2.0), "{b}");
        let gpu = job.with_gres("gpu", 1);
        let b = billing(&doc_weights(), &gpu, BillingMode::MaxTresGres);
        assert!(close(
            b,
            (1.0 * 2.0) + f64::max(1.0 * 1.0, 8.0 * 0.25) + (0.0 * 1.5)
        ));
        assert!(close(b, 4.0), "{b}");
        assert_eq!(stored_billing(b), 4);
        // The page's 3.0 is what a job of 4 GiB would bill: 2.0 + max(1.0, 1.0).
        let small = Tres::new(1, 4 * GIB, 1).with_gres("gpu", 1);
        assert!(close(
            billing(&doc_weights(), &small, BillingMode::MaxTresGres),
            3.0
        ));
    }

    /// priority_multifactor.shtml's jobs on 16-CPU, 64 GiB nodes with
    /// `TRESBillingWeights=CPU=1.0,Mem=0.25G`: "Job1: (1 *1.0) + (60*0.25) = (1 + 15) = 16",
    /// "Job2: (16*1.0) + (1 *0.25) = (16+.25) = 16.25", "Job3: (16*1.0) + (60*0.25) = (16+
    /// 15) = 31"; under MAX_TRES "Job1: MAX((1 *1.0), (60*0.25)) = 15" and "Job3:
    /// MAX((16*1.0), (64*0.25)) = 16". The page's MAX_TRES line for Job2 reads
    /// "MAX((15*1.0), (1 *0.25)) = 15", with 15 CPUs where the sum has 16 (a slip of the
    /// page): with Job2's 16 CPUs it is 16.
    #[test]
    fn billing_multifactor_doc_jobs() {
        let weights = parse("CPU=1.0,Mem=0.25G");
        let job1 = Tres::new(1, 60 * GIB, 1);
        let job2 = Tres::new(16, GIB, 1);
        let job3 = Tres::new(16, 60 * GIB, 1);
        assert!(close(billing(&weights, &job1, BillingMode::Sum), 16.0));
        assert!(close(billing(&weights, &job2, BillingMode::Sum), 16.25));
        assert_eq!(
            stored_billing(billing(&weights, &job2, BillingMode::Sum)),
            16
        );
        assert!(close(billing(&weights, &job3, BillingMode::Sum), 31.0));
        assert!(close(billing(&weights, &job1, BillingMode::MaxTres), 15.0));
        assert!(close(billing(&weights, &job2, BillingMode::MaxTres), 16.0));
        let job2_as_printed = Tres::new(15, GIB, 1);
        assert!(close(
            billing(&weights, &job2_as_printed, BillingMode::MaxTres),
            15.0
        ));
        assert!(close(
            billing(&weights, &Tres::new(16, 64 * GIB, 1), BillingMode::MaxTres),
            16.0
        ));
    }

    /// tres.shtml: "a memory weight of mem=0.25 on a job allocated 8GiB will result in 2048
    /// billed units (8192MiB * 0.25). A memory weight of mem=0.25G on the same job will
    /// result in 2 billed units ((8192MiB/1024) * 0.25)".
    #[test]
    fn memory_suffixes_count_from_mib() {
        let job = Tres::new(0, 8 * GIB, 1);
        assert!(close(
            billing(&parse("mem=0.25"), &job, BillingMode::Sum),
            2048.0
        ));
        assert!(close(
            billing(&parse("mem=0.25G"), &job, BillingMode::Sum),
            2.0
        ));
        // K and M are at or below the base unit: no conversion (get_convert_unit_val gives 0).
        assert_eq!(parse("mem=0.25K").get("mem"), Some(0.25));
        assert_eq!(parse("mem=0.25M").get("mem"), Some(0.25));
        assert_eq!(parse("mem=1T").get("mem"), Some(1.0 / 1048576.0));
        assert_eq!(parse("mem=1p").get("mem"), Some(1.0 / 1073741824.0));
        // burst buffers count in MiB too
        assert_eq!(parse("bb/cray=2G").get("BB/cray"), Some(2.0 / 1024.0));
        // other TRES count from none
        assert_eq!(parse("cpu=1k").get("cpu"), Some(1.0 / 1024.0));
        assert_eq!(parse("cpu=1G").get("cpu"), Some(1.0 / 1073741824.0));
        // T and P overflow Slurm's int there (undefined behaviour): refused.
        for text in ["cpu=3T", "gres/gpu=3p"] {
            assert!(matches!(
                TresWeights::parse(text),
                Err(TresWeightsError::UnitOverflow { .. })
            ));
        }
        // strtod reads only the unit's first character
        assert_eq!(parse("mem=0.25GB").get("mem"), Some(0.25 / 1024.0));
    }

    /// "By default, jobs are billed against the total number of allocated CPUs"
    /// (tres.shtml; `calc_job_billable_tres` and `assoc_mgr_tres_weighted` with no weights).
    #[test]
    fn no_weights_bill_the_cpus() {
        let job = Tres::new(7, 64 * GIB, 2).with_gres("gpu", 4);
        let none = BillingWeights::default();
        assert!(none.is_unset());
        for mode in [
            BillingMode::Sum,
            BillingMode::MaxTres,
            BillingMode::MaxTresGres,
        ] {
            assert_eq!(billing(&none, &job, mode), 7.0);
        }
        assert_eq!(parse(""), none);
        // A list of nothing is a list: every weight 0.
        let empty = parse(",");
        assert!(!empty.is_unset());
        assert_eq!(billing(&empty, &job, BillingMode::Sum), 0.0);
        // Weights without CPU do not bill the CPUs.
        assert_eq!(billing(&parse("node=3"), &job, BillingMode::Sum), 6.0);
    }

    /// Names are case-insensitive, typed GRES are their own TRES, the last weight of a TRES
    /// wins, the billing TRES is ignored.
    #[test]
    fn weights_names_and_typed_gres() {
        let w = parse("cpu=1,GRES/GPU=2,gres/gpu:A100=3,License/LicA=1.5,BILLING=100,CPU=4");
        assert_eq!(w.get("CPU"), Some(4.0));
        assert_eq!(w.get("gres/gpu"), Some(2.0));
        assert_eq!(w.get("gres/gpu:a100"), Some(3.0));
        assert_eq!(w.get("gres/gpu:v100"), None);
        assert_eq!(w.get("license/lica"), Some(1.5));
        let listed: Vec<String> = w.iter().map(|(t, _)| t).collect();
        assert_eq!(
            listed,
            [
                "cpu",
                "billing",
                "gres/gpu",
                "gres/gpu:a100",
                "license/lica"
            ]
        );
        // An a100 job holds gres/gpu and gres/gpu:a100: both weights bill it.
        let job = Tres::new(2, 0, 1)
            .with_gres("gpu", 1)
            .with_gres("GPU:a100", 1)
            .with_license("LICA", 2)
            .with_other("billing", 1000);
        assert!(close(
            billing(&w, &job, BillingMode::Sum),
            8.0 + 2.0 + 3.0 + 3.0
        ));
        // MAX_TRES: max(8, 2, 3) + 3; MAX_TRES_GRES: max(8) + (2 + 3) + 3.
        assert!(close(billing(&w, &job, BillingMode::MaxTres), 11.0));
        assert!(close(billing(&w, &job, BillingMode::MaxTresGres), 16.0));
    }

    /// Global TRES other than licences (burst buffers, energy) are summed under MAX_TRES;
    /// node count is a node TRES; negative weights lower a sum but not the node maximum,
    /// which starts at 0.
    #[test]
    fn max_tres_sorts_node_and_global_tres() {
        let w = parse("node=10,bb/cray=1G,energy=0.001,cpu=-1");
        let job = Tres::new(4, 0, 2)
            .with_other("bb/cray", 2048)
            .with_other("Energy", 5000);
        assert!(close(
            billing(&w, &job, BillingMode::Sum),
            20.0 + 2.0 + 5.0 - 4.0
        ));
        assert!(close(
            billing(&w, &job, BillingMode::MaxTres),
            20.0 + 2.0 + 5.0
        ));
        let negative = parse("cpu=-1");
        assert_eq!(billing(&negative, &job, BillingMode::MaxTres), 0.0);
        assert_eq!(billing(&negative, &job, BillingMode::Sum), -4.0);
        assert_eq!(stored_billing(-4.0), 0);
    }

    #[test]
    fn priority_flags_select_the_mode() {
        assert_eq!(BillingMode::from_priority_flags(""), BillingMode::Sum);
        assert_eq!(
            BillingMode::from_priority_flags("FAIR_TREE,max_tres"),
            BillingMode::MaxTres
        );
        assert_eq!(
            BillingMode::from_priority_flags("MAX_TRES_GRES,CALCULATE_RUNNING"),
            BillingMode::MaxTresGres
        );
        assert_eq!(
            BillingMode::from_priority_flags("MAX_TRES,MAX_TRES_GRES"),
            BillingMode::MaxTresGres
        );
    }

    /// Each bad item is named in its error.
    #[test]
    fn bad_items_are_named() {
        let err = |text: &str| match TresWeights::parse(text) {
            Ok(w) => panic!("{text} read as {w}"),
            Err(e) => e,
        };
        assert_eq!(
            err("CPU=1,Mem"),
            TresWeightsError::MissingWeight { item: "Mem".into() }
        );
        assert_eq!(
            err("CPU="),
            TresWeightsError::MissingWeight {
                item: "CPU=".into()
            }
        );
        assert_eq!(
            err("=1"),
            TresWeightsError::MissingWeight { item: "=1".into() }
        );
        assert_eq!(
            err("CPU=1,gpu=2"),
            TresWeightsError::UnknownTres {
                item: "gpu=2".into(),
                tres: "gpu".into()
            }
        );
        assert!(matches!(
            err("gres=2"),
            TresWeightsError::UnknownTres { .. }
        ));
        assert!(matches!(
            err("gres/=2"),
            TresWeightsError::UnknownTres { .. }
        ));
        assert!(matches!(
            err("cpu/x=2"),
            TresWeightsError::UnknownTres { .. }
        ));
        assert!(matches!(
            err(" cpu=2"),
            TresWeightsError::UnknownTres { .. }
        ));
        assert_eq!(
            err("mem=abc"),
            TresWeightsError::NotANumber {
                item: "mem=abc".into(),
                value: "abc".into()
            }
        );
        assert!(matches!(err("cpu=G"), TresWeightsError::NotANumber { .. }));
        assert!(matches!(
            err("cpu=inf"),
            TresWeightsError::NotANumber { .. }
        ));
        assert!(matches!(
            err("cpu=1e999"),
            TresWeightsError::NotANumber { .. }
        ));
        assert!(matches!(err("cpu=."), TresWeightsError::NotANumber { .. }));
        assert_eq!(
            err("mem=0.25X"),
            TresWeightsError::BadUnit {
                item: "mem=0.25X".into(),
                unit: 'X'
            }
        );
        // strtod stops at an `e` with no exponent digits: `e` is then the unit.
        assert!(matches!(
            err("cpu=1e"),
            TresWeightsError::BadUnit { unit: 'e', .. }
        ));
        let message = err("CPU=1,gpu=2").to_string();
        assert!(message.contains("\"gpu=2\""), "{message}");
    }

    /// Numbers as strtod reads them; empty items skipped; written back and read again.
    #[test]
    fn numbers_and_round_trip() {
        let w = parse("cpu=+.5,,node=2.,mem=1e-3G,gres/gpu=-3E1,license/x= 7");
        assert_eq!(w.get("cpu"), Some(0.5));
        assert_eq!(w.get("node"), Some(2.0));
        assert_eq!(w.get("mem"), Some(1e-3 / 1024.0));
        assert_eq!(w.get("gres/gpu"), Some(-30.0));
        assert_eq!(w.get("license/x"), Some(7.0));
        let text = doc_weights().to_string();
        assert_eq!(text, "cpu=1,mem=0.000244140625,gres/gpu=2,license/lica=1.5");
        assert_eq!(parse(&text), doc_weights());
        assert_eq!(parse(&parse(",").to_string()), parse(","));
        assert_eq!(BillingWeights::default().to_string(), "");
        let from_str: Result<TresWeights, _> = "CPU=2".parse();
        assert_eq!(from_str.ok().and_then(|w| w.get("cpu")), Some(2.0));
    }

    /// The TRES factor (`_get_tres_factors`, `_get_tres_prio_weighted`) with tres.shtml's
    /// `PriorityWeightTRES=CPU=1000,Mem=2000,GRES/gpu=3000` on a partition of 4 nodes of 32
    /// CPUs, 128 GiB and 4 GPUs: a job of 16 CPUs, 64 GiB and 2 GPUs has factors 16/128,
    /// 64/512 and 2/16, so 1000/8 + 2000/8 + 3000/8 = 750 (an example of ours: Slurm's pages
    /// give none with numbers).
    #[test]
    fn tres_priority_normalises_by_the_partition() {
        let weights = parse("CPU=1000,Mem=2000,GRES/gpu=3000");
        let partition = Tres::new(128, 512 * GIB, 4).with_gres("gpu", 16);
        let job = Tres::new(16, 64 * GIB, 1).with_gres("gpu", 2);
        let p = tres_priority(&weights, &job, &partition, TresNormalisation::Partition);
        assert!(close(p, 750.0), "{p}");
        // A TRES the partition has none of gives 0, not a division by 0.
        let no_gpus = Tres::new(128, 512 * GIB, 4);
        let p = tres_priority(&weights, &job, &no_gpus, TresNormalisation::Partition);
        assert!(close(p, 125.0 + 250.0), "{p}");
        // NO_NORMAL_TRES: raw amounts (memory in MiB).
        let p = tres_priority(&weights, &job, &partition, TresNormalisation::None);
        assert!(
            close(p, 16.0 * 1000.0 + 65536.0 * 2000.0 + 2.0 * 3000.0),
            "{p}"
        );
        // Licences against the cluster's total; negative weights allowed.
        let lic = parse("license/licA=-100");
        let cluster = Tres::default().with_license("lica", 10);
        let job = Tres::default().with_license("licA", 5);
        let p = tres_priority(&lic, &job, &cluster, TresNormalisation::Partition);
        assert!(close(p, -50.0), "{p}");
        // No PriorityWeightTRES: no factor.
        let none = PriorityWeightsTres::default();
        assert_eq!(
            tres_priority(&none, &job, &cluster, TresNormalisation::None),
            0.0
        );
    }

    /// Weights are read through serde from their slurm.conf string.
    #[test]
    fn serde_reads_and_writes_the_string() {
        #[derive(Deserialize, Serialize)]
        struct Part {
            weights: TresWeights,
        }
        let part: Result<Part, _> = serde_json::from_str(r#"{"weights":"CPU=1,Mem=1G"}"#);
        let part = match part {
            Ok(part) => part,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(part.weights.get("mem"), Some(1.0 / 1024.0));
        let written = serde_json::to_string(&part).map_err(|e| e.to_string());
        assert_eq!(
            written.as_deref(),
            Ok(r#"{"weights":"cpu=1,mem=0.0009765625"}"#)
        );
        let bad: Result<Part, _> = serde_json::from_str(r#"{"weights":"gpu=1"}"#);
        assert!(bad.is_err());
        // Its schema is a string's, as it is written.
        let schema = schemars::schema_for!(TresWeights);
        assert_eq!(
            schema.as_value().get("type"),
            Some(&serde_json::Value::from("string"))
        );
    }
}
