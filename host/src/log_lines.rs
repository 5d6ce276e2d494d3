//! What reaches a log line from a client stays on that line. The default (pretty) format writes
//! field values and messages as they are, so a tool name, a client name or a user agent holding a
//! newline could start a line of its own ("...INFO FORGED principal=bob"), and a carriage return
//! or a terminal escape could hide or rewrite what an operator sees. Every field of every event
//! (ours, rmcp's, hyper's) is escaped here before it is written; the JSON format escapes by itself.

use std::fmt::Write as _;

use tracing_subscriber::field::MakeExt;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format::Writer;

/// `text` with every character that could break, hide or restyle a log line written as a
/// visible escape: control characters (C0, DEL, C1, so newlines, carriage returns and ESC), line
/// and paragraph separators, and the bidirectional overrides that reorder what a terminal shows.
pub(crate) fn escaped(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(escape_where(text, hidden))
}

/// `text` with `\n`, `\r` and `\t` written as such and every other character `escape` picks as
/// `\u{…}`: the one way the log lines and the confirmation form make characters visible.
pub(crate) fn escape_where(text: &str, escape: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if escape(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

fn hidden(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The field formatter of the pretty format: `message` as is, other fields as `name=value`,
/// each value escaped (see [`escaped`]).
pub fn fields() -> impl for<'w> FormatFields<'w> + Send + Sync + 'static {
    tracing_subscriber::fmt::format::debug_fn(|w: &mut Writer<'_>, field: &tracing::field::Field, value| {
        let text = format!("{value:?}");
        match field.name() {
            "message" => write!(w, "{}", escaped(&text)),
            name => write!(w, "{name}={}", escaped(&text)),
        }
    })
    .delimited(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_a_client_sends_can_end_or_restyle_a_line() {
        let forged = "x\n2026-01-01T00:00:00.000000Z  INFO FORGED principal=bob\r\u{1b}[2K\u{202e}\u{85}";
        let shown = escaped(forged);
        assert!(!shown.chars().any(hidden), "{shown}");
        assert_eq!(shown, "x\\n2026-01-01T00:00:00.000000Z  INFO FORGED principal=bob\\r\\u{1b}[2K\\u{202e}\\u{85}");
        assert!(matches!(escaped("fabric_list_metros"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn the_pretty_format_escapes_messages_and_display_fields() {
        use tracing_subscriber::layer::SubscriberExt;
        let buffer = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        let sink = buffer.clone();
        let layer = tracing_subscriber::fmt::layer()
            .fmt_fields(fields())
            .with_ansi(false)
            .with_writer(move || Sink(sink.clone()));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            let name = "x\nINFO FORGED";
            tracing::info!(tool = %name, agent = ?name, "called {name}");
        });
        let text = String::from_utf8(buffer.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("called x\\nINFO FORGED") && text.contains("tool=x\\nINFO FORGED"), "{text}");
    }

    struct Sink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
}
