//! What a helper process (a server under test, the identity provider, Redis) printed, kept as it
//! comes and shown when the test that started it fails: a test that fails because a helper did
//! something unexpected says what the helper said.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead};

pub struct Printed {
    what: String,
    text: Arc<Mutex<String>>,
}

impl Printed {
    /// `what` names the process in the report (`equinix-mcp serve`, `the identity provider`).
    pub fn new(what: impl Into<String>) -> Printed {
        Printed { what: what.into(), text: Arc::default() }
    }

    /// Appends every line `output` yields, until it closes.
    pub fn collect(&self, output: impl AsyncRead + Unpin + Send + 'static) {
        let sink = self.text.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(output).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                sink.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
    }

    pub fn push_line(&self, line: &str) {
        self.text.lock().unwrap().push_str(&format!("{line}\n"));
    }

    pub fn text(&self) -> String {
        self.text.lock().unwrap().clone()
    }
}

impl Drop for Printed {
    fn drop(&mut self) {
        // libtest shows a failing test's captured output, this included
        if std::thread::panicking() {
            eprintln!("--- what {} printed ---\n{}--- end of {} ---", self.what, self.text(), self.what);
        }
    }
}
