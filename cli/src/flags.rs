//! The one command-line grammar of every subcommand: `--flag value` or `--flag=value`;
//! a flag that takes a list (`--backend`, `--kernel`, `--shape`, `--tensor-cores`)
//! accepts comma lists and repetition alike (`--backend cpu,vulkan` = `--backend cpu
//! --backend vulkan`); a flag that takes one value, or none, given twice is an error, as
//! is a flag the subcommand does not have.

use anyhow::{bail, Result};
use std::collections::HashMap;

/// How many values a flag takes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Arity {
    /// Exactly one (`--out DIR`); twice is an error.
    One,
    /// Any number, by commas or repetition.
    List,
    /// None (`--quick`); twice is an error.
    Switch,
}

/// A flag of a subcommand.
#[derive(Clone, Copy, Debug)]
pub struct Flag {
    /// `--name` without the dashes.
    pub name: &'static str,
    /// What it takes.
    pub arity: Arity,
}

/// A flag taking one value.
pub const fn one(name: &'static str) -> Flag {
    Flag { name, arity: Arity::One }
}

/// A flag taking a list.
pub const fn list(name: &'static str) -> Flag {
    Flag { name, arity: Arity::List }
}

/// A flag taking no value.
pub const fn switch(name: &'static str) -> Flag {
    Flag { name, arity: Arity::Switch }
}

/// The parsed command line of one subcommand.
#[derive(Debug, Default)]
pub struct Parsed {
    values: HashMap<&'static str, Vec<String>>,
    /// Arguments that are not flags (`fixture`'s files), in order.
    pub positional: Vec<String>,
}

impl Parsed {
    /// The value of a one-value flag, if given.
    pub fn one(&self, name: &str) -> Option<&str> {
        self.values.get(name).and_then(|v| v.first()).map(String::as_str)
    }

    /// Every value of a list flag, commas split, in order (empty when not given).
    pub fn list(&self, name: &str) -> Vec<String> {
        self.values
            .get(name)
            .map(|v| v.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect())
            .unwrap_or_default()
    }

    /// Whether a flag (of any arity) was given.
    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// A one-value flag parsed by `parse`, whose error message says what it takes.
    pub fn parsed<T>(&self, name: &str, what: &str, parse: impl Fn(&str) -> Option<T>) -> Result<Option<T>> {
        match self.one(name) {
            None => Ok(None),
            Some(v) => match parse(v) {
                Some(x) => Ok(Some(x)),
                None => bail!("--{name} takes {what} (got `{v}`)"),
            },
        }
    }
}

/// Parses `args` of subcommand `cmd` against its `flags`; `positional` says whether it
/// takes arguments that are not flags.
pub fn parse(cmd: &str, args: &[String], flags: &[Flag], positional: bool) -> Result<Parsed> {
    let mut out = Parsed::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let Some(body) = a.strip_prefix("--") else {
            if positional {
                out.positional.push(a.clone());
                continue;
            }
            bail!("`{cmd}` takes no argument `{a}` (options start with --)\n\n{}", crate::USAGE);
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let Some(flag) = flags.iter().find(|f| f.name == name) else {
            let known: Vec<String> = flags.iter().map(|f| format!("--{}", f.name)).collect();
            bail!("`{cmd}` has no option `--{name}`; its options: {}\n\n{}", known.join(", "), crate::USAGE);
        };
        let value = match (flag.arity, inline) {
            (Arity::Switch, Some(_)) => bail!("--{name} takes no value"),
            (Arity::Switch, None) => String::new(),
            (_, Some(v)) => v,
            (_, None) => match it.next() {
                Some(v) if !v.starts_with("--") => v.clone(),
                _ => bail!("--{name} needs a value"),
            },
        };
        let entry = out.values.entry(flag.name).or_default();
        if flag.arity != Arity::List && !entry.is_empty() {
            bail!("--{name} is given twice; give it once{}", if flag.arity == Arity::One { " (it takes one value)" } else { "" });
        }
        entry.push(value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    const FLAGS: [Flag; 4] = [one("out"), list("backend"), list("kernel"), switch("quick")];

    #[test]
    fn lists_take_commas_and_repetition_alike() {
        let p = parse("x", &args("--backend cpu,vulkan --backend=cuda --kernel a"), &FLAGS, false).unwrap();
        assert_eq!(p.list("backend"), ["cpu", "vulkan", "cuda"]);
        assert_eq!(p.list("kernel"), ["a"]);
        assert!(p.list("nothing").is_empty());
    }

    #[test]
    fn one_value_flags_and_switches_twice_are_errors() {
        let e = parse("x", &args("--out a --out b"), &FLAGS, false).unwrap_err().to_string();
        assert!(e.contains("--out is given twice"), "{e}");
        let e = parse("x", &args("--quick --quick"), &FLAGS, false).unwrap_err().to_string();
        assert!(e.contains("--quick is given twice"), "{e}");
        let p = parse("x", &args("--out=d --quick"), &FLAGS, false).unwrap();
        assert_eq!(p.one("out"), Some("d"));
        assert!(p.has("quick"));
    }

    #[test]
    fn unknown_flags_missing_values_and_stray_arguments_are_errors() {
        let e = parse("validate", &args("--frobnicate 1"), &FLAGS, false).unwrap_err().to_string();
        assert!(e.contains("`validate` has no option `--frobnicate`; its options: --out, --backend, --kernel, --quick"), "{e}");
        let e = parse("x", &args("--out"), &FLAGS, false).unwrap_err().to_string();
        assert!(e.contains("--out needs a value"), "{e}");
        let e = parse("x", &args("--out --quick"), &FLAGS, false).unwrap_err().to_string();
        assert!(e.contains("--out needs a value"), "{e}");
        let e = parse("x", &args("stray"), &FLAGS, false).unwrap_err().to_string();
        assert!(e.contains("takes no argument `stray`"), "{e}");
        let p = parse("fixture", &args("a.json --out d b.json"), &FLAGS, true).unwrap();
        assert_eq!(p.positional, ["a.json", "b.json"]);
        let e = parse("x", &args("--quick=yes"), &FLAGS, false).unwrap_err().to_string();
        assert!(e.contains("--quick takes no value"), "{e}");
    }
}
