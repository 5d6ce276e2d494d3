//! What a principal may do, from its access token's scopes. Three grants: reading Fabric
//! (every tool but the two below), proposing a change (`fabric_propose_change`) and confirming
//! one (`fabric_confirm_change`). A token-file token and the local principal hold all three.

use serde_json::Value;

/// One grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Read,
    Propose,
    Confirm,
}

impl Scope {
    pub(crate) const ALL: [Scope; 3] = [Scope::Read, Scope::Propose, Scope::Confirm];

    fn bit(self) -> u8 {
        match self {
            Scope::Read => 1,
            Scope::Propose => 2,
            Scope::Confirm => 4,
        }
    }

    /// The grant a tool of the `mutate` toolset named `tool` needs: the two broker tools are named
    /// by the host's contract with the component; any other tool only reads (a tool outside the
    /// `mutate` toolset cannot ask the person anything), and the capabilities check the grants
    /// again. The tool registry keeps it on each tool's row.
    pub(crate) fn of_tool(tool: &str, toolset: &str) -> Scope {
        use equinix_broker_contract::{CONFIRM_TOOL, MUTATE_TOOLSET, PROPOSE_TOOL};
        match (toolset, tool) {
            (MUTATE_TOOLSET, PROPOSE_TOOL) => Scope::Propose,
            (MUTATE_TOOLSET, CONFIRM_TOOL) => Scope::Confirm,
            _ => Scope::Read,
        }
    }
}

/// A set of grants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scopes(u8);

impl Scopes {
    pub(crate) const ALL: Scopes = Scopes(7);
    pub(crate) const NONE: Scopes = Scopes(0);

    pub(crate) fn with(self, scope: Scope) -> Scopes {
        Scopes(self.0 | scope.bit())
    }

    pub(crate) fn allows(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0
    }

    pub(crate) fn is_all(self) -> bool {
        self == Scopes::ALL
    }
}

impl Default for Scopes {
    fn default() -> Self {
        Scopes::ALL
    }
}

/// The scope names a provider uses for the three grants (`--oauth-scope-read` and the others).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeNames {
    pub read: String,
    pub propose: String,
    pub confirm: String,
    /// What clients put before a name when they ask for it (`--oauth-scope-prefix`): Entra ID
    /// wants `api://APP-ID/Fabric.Read` asked and puts `Fabric.Read` in the token.
    pub(crate) request_prefix: String,
}

impl Default for ScopeNames {
    fn default() -> Self {
        ScopeNames {
            read: "fabric:read".into(),
            propose: "fabric:propose".into(),
            confirm: "fabric:confirm".into(),
            request_prefix: String::new(),
        }
    }
}

/// Scope names this server cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BadScopeNames {
    #[error(
        "the scope name {0:?} must be 1-256 printable ASCII characters without spaces, quotes or backslashes (RFC \
         6749 section 3.3)"
    )]
    Name(String),
    #[error("the scope prefix must be printable ASCII without spaces, quotes or backslashes")]
    Prefix,
    #[error("the read, propose and confirm scopes need three different names")]
    Shared,
}

impl ScopeNames {
    pub(crate) fn name(&self, scope: Scope) -> &str {
        match scope {
            Scope::Read => &self.read,
            Scope::Propose => &self.propose,
            Scope::Confirm => &self.confirm,
        }
    }

    /// The name a client asks the provider for (in `scopes_supported` and in challenges).
    pub(crate) fn requested(&self, scope: Scope) -> String {
        format!("{}{}", self.request_prefix, self.name(scope))
    }

    /// In the order of [`Scope::ALL`], for `scopes_supported`.
    pub(crate) fn all(&self) -> Vec<String> {
        Scope::ALL.iter().map(|s| self.requested(*s)).collect()
    }

    /// Refuses names that cannot travel in a token's space-separated `scope` claim or in a
    /// `WWW-Authenticate` quoted string, and one name given to two grants.
    pub(crate) fn check(&self) -> Result<(), BadScopeNames> {
        for scope in Scope::ALL {
            let name = self.name(scope);
            let fits = !name.is_empty()
                && name.len() <= 256
                && name.bytes().all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\');
            if !fits {
                return Err(BadScopeNames::Name(name.to_string()));
            }
        }
        if !self.request_prefix.bytes().all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\') {
            return Err(BadScopeNames::Prefix);
        }
        if self.read == self.propose || self.read == self.confirm || self.propose == self.confirm {
            return Err(BadScopeNames::Shared);
        }
        Ok(())
    }

    /// The grants a token's claims carry: the space-separated `scope` (RFC 9068, Keycloak,
    /// oidc-provider) and `scp` as a string (Entra ID) or an array (Okta). Names this server does
    /// not know are ignored.
    pub(crate) fn granted(&self, claims: &serde_json::Map<String, Value>) -> Scopes {
        let mut names: Vec<&str> = Vec::new();
        for claim in ["scope", "scp"] {
            match claims.get(claim) {
                Some(Value::String(s)) => names.extend(s.split(' ').filter(|n| !n.is_empty())),
                Some(Value::Array(items)) => names.extend(items.iter().filter_map(Value::as_str)),
                _ => {}
            }
        }
        Scope::ALL
            .into_iter()
            .filter(|s| names.contains(&self.name(*s)) || names.contains(&self.requested(*s).as_str()))
            .fold(Scopes::NONE, |granted, s| granted.with(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn scopes_come_from_scope_and_scp_in_every_shape_providers_use() {
        let names = ScopeNames::default();
        let read = Scopes::NONE.with(Scope::Read);
        assert_eq!(names.granted(&claims(json!({"scope": "openid fabric:read"}))), read);
        assert_eq!(names.granted(&claims(json!({"scp": "fabric:read"}))), read);
        assert_eq!(
            names.granted(&claims(json!({"scp": ["fabric:read", "fabric:confirm"]}))),
            read.with(Scope::Confirm)
        );
        assert_eq!(names.granted(&claims(json!({"scope": "fabric:read fabric:propose fabric:confirm"}))), Scopes::ALL);
        assert_eq!(names.granted(&claims(json!({"scope": "fabric:readx fabric"}))), Scopes::NONE, "names match whole");
        assert_eq!(names.granted(&claims(json!({"scope": 7}))), Scopes::NONE);
    }

    #[test]
    fn each_broker_tool_needs_its_own_grant_and_the_rest_read() {
        assert_eq!(Scope::of_tool("fabric_propose_change", "mutate"), Scope::Propose);
        assert_eq!(Scope::of_tool("fabric_confirm_change", "mutate"), Scope::Confirm);
        assert_eq!(Scope::of_tool("fabric_search_ports", "ports"), Scope::Read);
        let read = Scopes::NONE.with(Scope::Read);
        assert!(read.allows(Scope::Read) && !read.allows(Scope::Propose) && !read.allows(Scope::Confirm));
    }

    #[test]
    fn a_request_prefix_is_asked_for_and_either_form_is_granted() {
        let names =
            ScopeNames { request_prefix: "api://app-1/".into(), read: "Fabric.Read".into(), ..Default::default() };
        assert_eq!(names.all()[0], "api://app-1/Fabric.Read");
        let read = Scopes::NONE.with(Scope::Read);
        assert_eq!(names.granted(&claims(json!({"scp": "Fabric.Read"}))), read);
        assert_eq!(names.granted(&claims(json!({"scp": "api://app-1/Fabric.Read"}))), read);
    }

    #[test]
    fn names_that_cannot_travel_are_refused() {
        let mut names = ScopeNames::default();
        assert!(names.check().is_ok());
        names.propose = "fabric propose".into();
        let e = names.check().unwrap_err();
        assert!(e == BadScopeNames::Name("fabric propose".into()) && e.to_string().contains("without spaces"), "{e}");
        names.propose = "fabric:read".into();
        let e = names.check().unwrap_err();
        assert!(e == BadScopeNames::Shared && e.to_string().contains("three different names"), "{e}");
        names.propose = "fabric:propose".into();
        names.request_prefix = "api://app 1/".into();
        assert_eq!(names.check(), Err(BadScopeNames::Prefix));
    }
}
