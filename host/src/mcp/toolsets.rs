//! Toolset selection (`--toolsets` / `EQUINIX_MCP_TOOLSETS`): the one place that decides which
//! toolsets are served.
//!
//! Nothing named (or `default`) serves the contract's default toolsets the catalog has (all its
//! read-only ones if it has none of them); `all` serves every read-only toolset; `mutate` is
//! served only when named. Unknown names are an error.

use std::collections::BTreeSet;

use equinix_broker_contract::{DEFAULT_TOOLSETS, MUTATE_TOOLSET};

/// The operator's selection as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    names: Option<Vec<String>>,
}

impl Selection {
    /// Parses a comma-separated list; `None` or an empty string means the default.
    pub fn parse(spec: Option<&str>) -> Self {
        let names: Vec<String> =
            spec.unwrap_or("").split(',').map(|s| s.trim().to_ascii_lowercase()).filter(|s| !s.is_empty()).collect();
        Selection { names: if names.is_empty() { None } else { Some(names) } }
    }

    /// Whether the operator named `mutate` (decides whether the create routes open at all).
    pub(crate) fn names_mutate(&self) -> bool {
        self.names.as_ref().is_some_and(|n| n.iter().any(|s| s == MUTATE_TOOLSET))
    }

    /// The enabled toolsets given the toolsets the catalog has.
    pub(crate) fn resolve(&self, available: &BTreeSet<String>) -> Result<BTreeSet<String>, UnknownToolset> {
        let read_only: BTreeSet<String> = available.iter().filter(|t| *t != MUTATE_TOOLSET).cloned().collect();
        let defaults: BTreeSet<String> =
            read_only.iter().filter(|t| DEFAULT_TOOLSETS.contains(&t.as_str())).cloned().collect();
        let defaults = if defaults.is_empty() { read_only.clone() } else { defaults };
        let Some(names) = &self.names else {
            return Ok(defaults);
        };
        let mut enabled = BTreeSet::new();
        for name in names {
            match name.as_str() {
                "all" => enabled.extend(read_only.iter().cloned()),
                "default" => enabled.extend(defaults.iter().cloned()),
                MUTATE_TOOLSET => {
                    enabled.insert(MUTATE_TOOLSET.to_string());
                }
                other if available.contains(other) => {
                    enabled.insert(other.to_string());
                }
                other => {
                    let known: Vec<&str> = available
                        .iter()
                        .map(String::as_str)
                        .chain(["all", "default", MUTATE_TOOLSET])
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .collect();
                    let meant = known.iter().find(|k| near(other, k)).map(|k| k.to_string());
                    let known = known.into_iter().map(String::from).collect();
                    return Err(UnknownToolset { name: other.to_string(), meant, known });
                }
            }
        }
        Ok(enabled)
    }
}

/// A name in `--toolsets` that is no toolset of the catalog (nor `all`, `default` or `mutate`):
/// the one it is a slip of, if any, and every name it could have been.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "--toolsets: unknown toolset {name:?}{}; the toolsets are: {}",
    .meant.as_ref().map(|m| format!(" (did you mean {m:?}?)")).unwrap_or_default(),
    .known.join(", ")
)]
pub struct UnknownToolset {
    pub name: String,
    pub meant: Option<String>,
    pub known: Vec<String>,
}

/// Whether `typed` is one slip from `name`: a letter more, fewer or different, or two swapped.
fn near(typed: &str, name: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (typed.to_lowercase().chars().collect(), name.chars().collect());
    // optimal string alignment distance, capped: only 0 or 1 matters
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()] <= 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_toolset_is_named_with_the_one_meant() {
        let err = Selection::parse(Some("metro")).resolve(&avail()).unwrap_err();
        assert_eq!(err.meant.as_deref(), Some("metros"));
        let err = err.to_string();
        assert!(err.contains(r#"unknown toolset "metro" (did you mean "metros"?)"#), "{err}");
        let err = Selection::parse(Some("stuff")).resolve(&avail()).unwrap_err().to_string();
        assert!(err.starts_with("--toolsets: unknown toolset \"stuff\"; the toolsets are: "), "{err}");
        assert!(near("prots", "ports") && near("Metros", "metros") && !near("net", "metros"));
    }

    fn avail() -> BTreeSet<String> {
        ["metros", "ports", "events", "mutate"].iter().map(|s| s.to_string()).collect()
    }

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn default_serves_the_default_toolsets_and_not_mutate() {
        assert_eq!(Selection::parse(None).resolve(&avail()).unwrap(), set(&["metros", "ports"]));
        assert_eq!(Selection::parse(Some(" ")).resolve(&avail()).unwrap(), set(&["metros", "ports"]));
        assert_eq!(
            Selection::parse(Some("default,events")).resolve(&avail()).unwrap(),
            set(&["events", "metros", "ports"])
        );
        // a catalog of other toolsets is served whole by default
        let theirs: BTreeSet<String> = ["alpha", "beta", "mutate"].iter().map(|s| s.to_string()).collect();
        assert_eq!(Selection::parse(None).resolve(&theirs).unwrap(), set(&["alpha", "beta"]));
    }

    #[test]
    fn all_never_includes_mutate_but_naming_it_does() {
        assert_eq!(Selection::parse(Some("all")).resolve(&avail()).unwrap(), set(&["events", "metros", "ports"]));
        let s = Selection::parse(Some("Ports, mutate"));
        assert!(s.names_mutate());
        assert_eq!(s.resolve(&avail()).unwrap(), set(&["ports", "mutate"]));
        assert!(!Selection::parse(Some("all")).names_mutate());
    }

    #[test]
    fn unknown_names_are_refused_with_the_known_list() {
        let err = Selection::parse(Some("ports,prots")).resolve(&avail()).unwrap_err().to_string();
        assert!(err.contains("\"prots\"") && err.contains("metros") && err.contains("mutate"), "{err}");
    }
}
