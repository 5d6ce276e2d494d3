//! What tests propose, from the simulator's own seeded estate.

use equinix_fabric_sim as fabric_sim;
use serde_json::{Value, json};

use super::client::{Client, call_on, is_error, structured};

/// Two seeded simulator ports a connection may join.
pub const PORT_A: &str = fabric_sim::PORTS[0].0;
pub const PORT_Z: &str = fabric_sim::PORTS[3].0;

/// A connection create between [`PORT_A`] and [`PORT_Z`].
pub fn connection_spec(name: &str, vlan: u64) -> Value {
    json!({
        "type": "EVPL_VC",
        "name": name,
        "bandwidth": 1000,
        "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": PORT_A}, "linkProtocol": {"type": "DOT1Q", "vlanTag": vlan}}},
        "zSide": {"accessPoint": {"type": "COLO", "port": {"uuid": PORT_Z}, "linkProtocol": {"type": "DOT1Q", "vlanTag": vlan}}},
        "project": {"projectId": fabric_sim::PROJECT_ID},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]
    })
}

/// A connection create of 10 Mbps between [`PORT_A`] and [`PORT_Z`]: the simulator counts what each
/// connection uses of its ports, as Fabric does, and nine 1 Gbps connections fill them; hundreds
/// of these fit, for the tests that create many.
pub fn light_connection_spec(name: &str, vlan: u64) -> Value {
    let mut spec = connection_spec(name, vlan);
    spec["bandwidth"] = json!(10);
    spec
}

/// Proposes a connection create and returns its structured result (which must not be an error).
pub async fn propose_on(client: &Client, name: &str, vlan: u64) -> Value {
    let r = call_on(
        client,
        "fabric_propose_change",
        json!({"change_type": "connection_create", "spec": connection_spec(name, vlan)}),
    )
    .await;
    assert!(!is_error(&r), "propose failed: {:?}", r.structured_content);
    structured(&r)
}
