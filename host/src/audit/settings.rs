//! Where the audit log is written, and the signed checkpoints of its chain.

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug, Clone)]
pub struct AuditArgs {
    /// Append-only JSON-lines audit log of every propose and confirm (default:
    /// `$XDG_STATE_HOME/equinix-mcp/audit.jsonl`).
    #[arg(long, env = "EQUINIX_MCP_AUDIT_LOG", value_name = "PATH")]
    pub audit_log: Option<PathBuf>,

    /// Sign checkpoints of the audit log's hash chain with this Ed25519 private key (PKCS#8
    /// PEM, as `openssl genpkey -algorithm ed25519` writes it; mode 600). Needs
    /// --audit-checkpoints.
    #[arg(long, env = "EQUINIX_MCP_AUDIT_SIGNING_KEY", value_name = "FILE", requires = "audit_checkpoints")]
    pub(crate) audit_signing_key: Option<PathBuf>,

    /// Where signed checkpoints go: another file than the log, ideally on another volume or host.
    #[arg(long, env = "EQUINIX_MCP_AUDIT_CHECKPOINTS", value_name = "FILE", requires = "audit_signing_key")]
    pub(crate) audit_checkpoints: Option<PathBuf>,

    /// A checkpoint after this many synced records (and at least every 60 s, and at shutdown).
    #[arg(
        long,
        env = "EQUINIX_MCP_AUDIT_CHECKPOINT_EVERY",
        default_value_t = 1000,
        value_name = "N",
        value_parser = crate::value_parsers::at_least_one(),
    )]
    pub(crate) audit_checkpoint_every: usize,
}
