//! The figures table: each row a figure, what was measured, its target and the verdict.

/// Rows in the order they were measured.
#[derive(Default)]
pub struct Table(Vec<[String; 4]>);

impl Table {
    /// A figure with a target: `met` or `MISSED`.
    pub fn row(&mut self, figure: &str, value: String, target: &str, verdict: bool) {
        self.0.push([figure.into(), value, target.into(), if verdict { "met".into() } else { "MISSED".into() }]);
    }

    /// A figure shown for comparison, without a target.
    pub fn context(&mut self, figure: &str, value: String) {
        self.0.push([figure.into(), value, "(context)".into(), "-".into()]);
    }

    /// Another table's rows after these.
    pub fn append(&mut self, mut other: Table) {
        self.0.append(&mut other.0);
    }

    /// The table as Markdown on stdout.
    pub fn print(&self) {
        println!("| figure | measured | target | verdict |");
        println!("|---|---|---|---|");
        for [a, b, c, d] in &self.0 {
            println!("| {a} | {b} | {c} | {d} |");
        }
    }
}
