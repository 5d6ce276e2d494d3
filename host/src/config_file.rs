//! `--config FILE`: serve's settings in one TOML file a team reviews, one key per flag, named as
//! the flag is without its dashes (`listen = "0.0.0.0:8931"`, `fabric-sim = true`).
//!
//! A key's value is given to the command line as its flag would be, unless the command line or
//! the environment already gives that flag: the order is a flag on the command line, then its
//! environment variable, then the file, then the built-in default; and what clap checks of flags
//! (types, ranges, flags that need each other) it checks of the file's. A key the flags do not
//! have, or a value of the wrong type, stops the start naming the file, the line and the key.
//! Secrets are not settings here: they come from the environment or their `_FILE` (see
//! `crate::secret`), so the file can be world-readable and reviewed.

use std::ffi::OsString;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Arg, ArgAction};
use toml_edit::{Item, Value};

/// The environment variable naming the file (the flag is `--config`).
pub(crate) const ENV: &str = "EQUINIX_MCP_CONFIG";

/// The most a config file may hold: a settings file, not a data file.
const MAX_BYTES: u64 = 1 << 20;

/// The file `--config PATH` (or `--config=PATH`) names on the command line, else
/// `EQUINIX_MCP_CONFIG`. Read before clap parses, since the file changes what it parses with.
pub fn named(args: &[OsString]) -> Option<PathBuf> {
    let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        if word == "--config" {
            return words.next().map(|p| PathBuf::from(p.as_ref()));
        }
        if let Some(path) = word.strip_prefix("--config=") {
            return Some(PathBuf::from(path));
        }
    }
    std::env::var_os(ENV).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// `argv` with the settings of the file at `path` added as flags where neither the command line
/// nor the environment sets them: for serve's flags, wherever they are taken (at the top level,
/// by `serve` and by `call`). Other commands take no config file; what clap refuses of the
/// whole is left for it to report.
pub fn apply(cmd: &clap::Command, argv: Vec<OsString>, path: &Path) -> anyhow::Result<Vec<OsString>> {
    let text = read(path)?;
    let serve = cmd.find_subcommand("serve").context("the command line has a serve command")?;
    let settings = settings(&text, path, serve)?;
    // what the command line and the environment give, before the file's settings complete them
    // (so a flag there that needs one of the file's is not refused yet)
    let Ok(matches) = cmd.clone().ignore_errors(true).try_get_matches_from(&argv) else { return Ok(argv) };
    // top-level flags cannot go with a command, so a command is the first word
    let (given, at) = match matches.subcommand() {
        None => (&matches, 1),
        Some(("serve" | "call", sub)) => (sub, 2),
        Some(_) => return Ok(argv),
    };
    let mut added = Vec::new();
    for setting in &settings {
        let set_already = matches!(
            given.value_source(&setting.id),
            Some(clap::parser::ValueSource::CommandLine | clap::parser::ValueSource::EnvVariable)
        );
        if !set_already {
            added.extend(setting.words());
        }
    }
    let mut out = argv;
    out.splice(at..at, added);
    Ok(out)
}

/// One key of the file: its flag and the values it gives.
#[derive(Debug)]
struct Setting {
    id: String,
    long: String,
    switch: bool,
    values: Vec<String>,
}

impl Setting {
    /// The command-line words for it: `--long=value` per value, a switch alone when on.
    fn words(&self) -> Vec<OsString> {
        match self.switch {
            true => self.values.iter().filter(|v| *v == "true").map(|_| format!("--{}", self.long).into()).collect(),
            false => self.values.iter().map(|v| format!("--{}={v}", self.long).into()).collect(),
        }
    }
}

fn read(path: &Path) -> anyhow::Result<String> {
    use std::io::Read;
    let shown = path.display();
    let file = std::fs::File::open(path).with_context(|| format!("--config {shown}"))?;
    let mut text = String::new();
    file.take(MAX_BYTES + 1).read_to_string(&mut text).with_context(|| format!("--config {shown}: not UTF-8 text"))?;
    if text.len() as u64 > MAX_BYTES {
        bail!("--config {shown}: more than {} KiB; a config file holds settings only", MAX_BYTES >> 10);
    }
    Ok(text)
}

/// Each key's flag and the values it takes, checked against `serve`'s flags.
fn settings(text: &str, path: &Path, serve: &clap::Command) -> anyhow::Result<Vec<Setting>> {
    let shown = path.display();
    let doc = toml_edit::Document::parse(text).map_err(|e| anyhow::anyhow!("--config {shown}: {e}"))?;
    let at = |span: Option<Range<usize>>| span.map_or(String::new(), |s| format!(" line {}", line_of(text, s.start)));
    let flags: Vec<&Arg> = serve.get_arguments().filter(|a| settable(a)).collect();
    let mut out = Vec::new();
    for (key, item) in doc.as_table().iter() {
        let span = doc.as_table().get_key_value(key).and_then(|(k, _)| k.span());
        let here = format!("{shown}{}: `{key}`", at(span));
        if !item.is_value() {
            bail!("{here}: the file has no sections: every key is a flag's name, at the top");
        }
        let Some(arg) = flags.iter().find(|a| a.get_long() == Some(key)) else {
            bail!("{here} is not a setting: {}", unknown(key, &flags));
        };
        let values = match (item, arg.get_action()) {
            (Item::Value(Value::Boolean(b)), ArgAction::SetTrue) => vec![b.value().to_string()],
            (_, ArgAction::SetTrue) => bail!("{here} is a switch: write `{key} = true` or `{key} = false`"),
            (Item::Value(Value::Array(items)), ArgAction::Append) => items
                .iter()
                .map(|v| scalar(v).with_context(|| format!("{here}: {}", expected(arg))))
                .collect::<Result<_, _>>()?,
            (Item::Value(v), ArgAction::Set) => vec![scalar(v).with_context(|| format!("{here}: {}", expected(arg)))?],
            (Item::Value(v), ArgAction::Append) => {
                vec![scalar(v).with_context(|| format!("{here}: {}", expected(arg)))?]
            }
            _ => bail!("{here}: {}", expected(arg)),
        };
        for value in &values {
            check(arg, value).map_err(|why| anyhow::anyhow!("{here}: {why}"))?;
        }
        let switch = matches!(arg.get_action(), ArgAction::SetTrue);
        out.push(Setting { id: arg.get_id().to_string(), long: key.to_string(), switch, values });
    }
    Ok(out)
}

/// Whether a flag can be set from the file: not help, nor the file itself.
fn settable(arg: &Arg) -> bool {
    !matches!(arg.get_id().as_str(), "help" | "version" | "config") && arg.get_long().is_some()
}

/// A string, number or boolean as the command line would spell it.
fn scalar(value: &Value) -> anyhow::Result<String> {
    Ok(match value {
        Value::String(s) => s.value().clone(),
        Value::Integer(i) => i.value().to_string(),
        Value::Float(f) => f.value().to_string(),
        Value::Boolean(b) => b.value().to_string(),
        _ => bail!("a table, array or date is no value here"),
    })
}

fn expected(arg: &Arg) -> String {
    let name = arg.get_value_names().and_then(|n| n.first()).map_or("VALUE".to_string(), |n| n.to_string());
    match arg.get_action() {
        ArgAction::Append => format!("expected a list of {name}, as the flag takes one or more"),
        _ => format!("expected one {name}, as `--{} {name}` takes", arg.get_long().unwrap_or_default()),
    }
}

/// Runs `value` through the flag's own parser (its type, range or choices), alone: a flag's ties
/// to others are checked when the whole command line is parsed.
fn check(arg: &Arg, value: &str) -> Result<(), String> {
    let long = arg.get_long().unwrap_or_default();
    let mut probe = Arg::new("value").long(long.to_string()).action(ArgAction::Set).num_args(1);
    probe = probe.value_parser(arg.get_value_parser().clone());
    if let Some(names) = arg.get_value_names() {
        probe = probe.value_names(names.to_vec());
    }
    let cmd = clap::Command::new("config").no_binary_name(true).color(clap::ColorChoice::Never).arg(probe);
    match cmd.try_get_matches_from([format!("--{long}={value}")]) {
        Ok(_) => Ok(()),
        Err(e) => {
            let said = e.render().to_string();
            let said = said.split("\n\n").next().unwrap_or_default().trim();
            Err(said.strip_prefix("error: ").unwrap_or(said).to_string())
        }
    }
}

/// The closest flag names, or where secrets go instead.
fn unknown(key: &str, flags: &[&Arg]) -> String {
    if ["secret", "password", "state-key", "token"].iter().any(|w| key.contains(w)) && !key.ends_with("-file") {
        return "secrets are not kept in the config file: set their environment variable or their `_FILE` (see \
                docs/configuration.md)"
            .to_string();
    }
    let mut near: Vec<(f64, &str)> = flags
        .iter()
        .filter_map(|a| a.get_long())
        .map(|long| (strsim::jaro_winkler(key, long), long))
        .filter(|(score, _)| *score > 0.8)
        .collect();
    near.sort_by(|a, b| b.0.total_cmp(&a.0));
    match near.first() {
        Some((_, long)) => format!("did you mean `{long}`? (every key is a flag of `equinix-mcp serve --help`)"),
        None => "every key is a flag of `equinix-mcp serve --help`, without its dashes".to_string(),
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].bytes().filter(|b| *b == b'\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn serve() -> clap::Command {
        crate::cli::Cli::command().find_subcommand("serve").unwrap().clone()
    }

    fn parse(text: &str) -> anyhow::Result<Vec<Setting>> {
        settings(text, Path::new("team.toml"), &serve())
    }

    #[test]
    fn keys_are_flag_names_and_take_their_types() {
        let got = parse(
            "# the team's server\ntransport = \"http\"\nlisten = \"0.0.0.0:8931\"\nelicit-timeout-ms = 60000\n\
             fabric-sim = true\n",
        )
        .unwrap();
        let words: Vec<_> = got.iter().flat_map(Setting::words).collect();
        assert_eq!(words, ["--transport=http", "--listen=0.0.0.0:8931", "--elicit-timeout-ms=60000", "--fabric-sim"]);
        let off = parse("fabric-sim = false\n").unwrap();
        assert!(off[0].words().is_empty(), "a switch turned off adds nothing");
    }

    #[test]
    fn mistakes_name_the_file_line_and_key() {
        let e = parse("transport = \"http\"\n\nlisten-on = \"x\"\n").unwrap_err().to_string();
        assert!(
            e.contains("team.toml line 3: `listen-on` is not a setting") && e.contains("did you mean `listen`"),
            "{e}"
        );
        let e = parse("elicit-timeout-ms = \"soon\"\n").unwrap_err().to_string();
        assert!(e.contains("line 1: `elicit-timeout-ms`") && e.contains("invalid value 'soon'"), "{e}");
        let e = parse("transport = \"carrier-pigeon\"\n").unwrap_err().to_string();
        assert!(e.contains("possible values") || e.contains("stdio"), "{e}");
        let e = parse("fabric-sim = \"yes\"\n").unwrap_err().to_string();
        assert!(e.contains("`fabric-sim` is a switch"), "{e}");
        let e = parse("[store]\nproposal-store = \"memory\"\n").unwrap_err().to_string();
        assert!(e.contains("`store`") && e.contains("no sections"), "{e}");
        let e = parse("client-secret = \"s3cret\"\n").unwrap_err().to_string();
        assert!(e.contains("secrets are not kept in the config file") && !e.contains("s3cret"), "{e}");
        let e = parse("listen = \n").unwrap_err().to_string();
        assert!(e.contains("team.toml") && e.contains("line 1"), "{e}");
    }

    #[test]
    fn the_file_is_named_by_the_flag_first() {
        let argv = |words: &[&str]| words.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(named(&argv(&["equinix-mcp", "serve", "--config", "a.toml"])), Some("a.toml".into()));
        assert_eq!(named(&argv(&["equinix-mcp", "--config=b.toml"])), Some("b.toml".into()));
    }
}
