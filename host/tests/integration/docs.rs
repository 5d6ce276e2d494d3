//! The commands the docs show are commands the binary takes, so a renamed flag or subcommand
//! fails the suite. `console` blocks (README.md, docs/*.md) run with trycmd and must print what
//! they show; every command line of a `sh` block that runs `equinix-mcp` is parsed by the binary
//! itself, with `--help` appended so nothing runs; every `EQUINIX_*` variable the docs name is one
//! some command reads.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_equinix-mcp");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// README.md and every page under docs/, with their text: what a user is told to do. The
/// engineering log is not one: it records what was, in the words of its day.
fn pages() -> Vec<(String, String)> {
    let mut pages = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md") && !p.ends_with("engineering-log.md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
        .into_iter()
        .map(|p| {
            let name = p.strip_prefix(repo()).unwrap().display().to_string();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

#[test]
fn console_examples_print_what_the_docs_show() {
    let cases = trycmd::TestCases::new();
    cases.register_bin("equinix-mcp", Path::new(BIN)).env("NO_COLOR", "1");
    let mut any = false;
    for (name, text) in pages() {
        if text.contains("```console\n") {
            cases.case(repo().join(name));
            any = true;
        }
    }
    assert!(any, "the docs show no console example");
}

/// One logical line of a `sh` block: where it is, and its text with continuations joined.
fn sh_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let (mut in_sh, mut pending, mut start) = (false, String::new(), 0);
    for (i, line) in text.lines().enumerate() {
        if !in_sh {
            in_sh = line.trim_start() == "```sh";
            continue;
        }
        if line.trim_start().starts_with("```") {
            in_sh = false;
            continue;
        }
        if pending.is_empty() {
            start = i + 1;
        }
        match line.strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head);
                pending.push(' ');
            }
            None => {
                pending.push_str(line);
                out.push((start, std::mem::take(&mut pending)));
            }
        }
    }
    out
}

/// Shell words, as far as the docs need: quotes, `$(...)` and `${...}` as one opaque word part,
/// `#` starting a comment, and `&&`, `||`, `;`, `|` ending a command.
fn commands(line: &str) -> Vec<Vec<String>> {
    let (mut commands, mut words, mut word) = (Vec::new(), Vec::new(), String::new());
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut String, words: &mut Vec<String>, in_word: &mut bool| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => end_word(&mut word, &mut words, &mut in_word),
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(c),
                    }
                }
            }
            '$' if matches!(chars.peek(), Some('(' | '{')) => {
                in_word = true;
                let (open, close) = if chars.next() == Some('(') { ('(', ')') } else { ('{', '}') };
                let mut depth = 1;
                for c in chars.by_ref() {
                    depth += i32::from(c == open) - i32::from(c == close);
                    if depth == 0 {
                        break;
                    }
                }
                word.push_str("SUBSTITUTED");
            }
            '&' | '|' | ';' => {
                end_word(&mut word, &mut words, &mut in_word);
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                commands.push(std::mem::take(&mut words));
            }
            _ => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut words, &mut in_word);
    commands.push(words);
    commands.retain(|c| !c.is_empty());
    commands
}

/// The arguments a command gives `equinix-mcp`, if it runs it: directly, by path, after
/// `VAR=value`s, as the program of another command (`claude mcp add ... -- PATH ...`, `npx ...`),
/// or through `cargo run -p equinix-mcp -- ...`. A redirection ends the arguments.
fn binary_args(words: &[String]) -> Option<Vec<String>> {
    let is_binary = |w: &str| w == "equinix-mcp" || w.ends_with("/equinix-mcp");
    let at = words.iter().enumerate().position(|(i, w)| is_binary(w) && (i == 0 || words[i - 1] != "-p"));
    let rest = match at {
        Some(i) => &words[i + 1..],
        None if words.first().is_some_and(|w| w == "cargo") && words.iter().any(|w| w == "equinix-mcp") => {
            let dashes = words.iter().position(|w| w == "--")?;
            &words[dashes + 1..]
        }
        None => return None,
    };
    Some(rest.iter().take_while(|w| !w.starts_with('>') && !w.starts_with("2>") && *w != "<").cloned().collect())
}

#[test]
fn the_shell_parser_reads_what_the_docs_write() {
    let line =
        r#"FOO=1 claude mcp add --env X="$(cat f)" s -- /h/.cargo/bin/equinix-mcp serve --toolsets all,mutate # note"#;
    let cmds = commands(line);
    assert_eq!(binary_args(&cmds[0]).unwrap(), ["serve", "--toolsets", "all,mutate"]);
    let cmds = commands("rustup toolchain install && cargo run --release -p equinix-mcp -- serve --fabric-sim");
    assert_eq!(cmds.len(), 2);
    assert_eq!(binary_args(&cmds[0]), None);
    assert_eq!(binary_args(&cmds[1]).unwrap(), ["serve", "--fabric-sim"]);
    let cmds = commands("equinix-mcp passkeys export > passkeys.json; echo 'a | b'");
    assert_eq!(binary_args(&cmds[0]).unwrap(), ["passkeys", "export"]);
    assert_eq!(cmds[1], ["echo", "a | b"]);
    let lines = sh_lines("```sh\nequinix-mcp serve \\\n  --fabric-sim\n```\n");
    assert_eq!(lines, [(2, "equinix-mcp serve    --fabric-sim".to_string())]);
}

/// Runs `args --help`: the binary's own parser accepts every flag and value before the help.
fn parses(args: &[String]) -> Result<(), String> {
    let out = Command::new(BIN)
        .args(args)
        .arg("--help")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .output()
        .unwrap();
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

#[test]
fn every_documented_command_line_parses() {
    let (mut checked, mut wrong) = (0, Vec::new());
    for (page, text) in pages() {
        for (line, logical) in sh_lines(&text) {
            for words in commands(&logical) {
                let Some(args) = binary_args(&words) else { continue };
                checked += 1;
                if let Err(why) = parses(&args) {
                    wrong.push(format!("{page}:{line}: equinix-mcp {}\n  {}", args.join(" "), why.trim()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "commands in the docs the binary refuses:\n{}", wrong.join("\n"));
    assert!(checked >= 20, "only {checked} documented command lines were found: is the parser still reading the docs?");
}

/// A renamed flag is caught; so is a value the flag refuses.
#[test]
fn a_renamed_flag_or_a_bad_value_does_not_parse() {
    let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
    assert!(parses(&words("serve --fabric-sim --toolsets all,mutate")).is_ok());
    assert!(parses(&words("serve --fabric-simulator")).is_err());
    assert!(parses(&words("serve --transport carrier-pigeon")).is_err());
}

/// Every help text of the binary, the commands' and their subcommands'.
fn all_help() -> String {
    let run = |args: &[&str]| {
        let out = Command::new(BIN).args(args).arg("--help").output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mut text = run(&[]);
    let mut stack: Vec<Vec<String>> = vec![vec![]];
    while let Some(path) = stack.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let help = run(&args);
        if let Some(list) = help.split("Commands:\n").nth(1) {
            for line in list.lines().take_while(|l| l.starts_with("  ")) {
                let name = line.split_whitespace().next().unwrap_or("help");
                if name != "help" {
                    let mut next = path.clone();
                    next.push(name.to_string());
                    stack.push(next);
                }
            }
        }
        text.push_str(&help);
    }
    text
}

/// The docs name no environment variable that no command reads.
#[test]
fn every_documented_environment_variable_is_read() {
    let help = all_help();
    let mut unknown = Vec::new();
    for (page, text) in pages() {
        for (i, _) in text.match_indices("EQUINIX_") {
            let rest = &text[i..];
            let end =
                rest.find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')).unwrap_or(rest.len());
            let name = rest[..end].trim_end_matches('_');
            if name.len() > "EQUINIX_".len() && !help.contains(name) && !unknown.iter().any(|(_, n)| n == name) {
                unknown.push((page.clone(), name.to_string()));
            }
        }
    }
    assert!(unknown.is_empty(), "the docs name variables no `--help` lists: {unknown:?}");
}
