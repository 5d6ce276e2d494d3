//! End-to-end tests for `equinix-mcp` live in `tests/`; they spawn the real binary and talk MCP
//! to it with an rmcp client, against the Fabric simulator on loopback.
