//! Declarative JSON grammars: one table both checks a value (every problem at once, each named
//! by its JSON pointer) and produces the JSON Schema that describes it, so the schema a client
//! sees and the rules the component enforces cannot drift apart. A checked value comes back
//! normalized (integers written as such), which for a create spec is exactly the body sent.
//!
//! [`kinds`] are what the tables are written in, [`check`] applies them, [`problems`] collects
//! what it found, [`schema`] describes them.

mod check;
mod kinds;
mod problems;
mod schema;

pub(crate) use check::check;
pub(crate) use kinds::*;
pub use problems::{Problem, Problems, to_error};
pub(crate) use schema::{schema, schemas_sharing};

#[cfg(test)]
mod tests;
