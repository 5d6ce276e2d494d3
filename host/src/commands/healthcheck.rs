//! `equinix-mcp healthcheck`: GET this server's `/healthz` over loopback and exit 0 only on
//! 200. A `scratch` image has no curl or shell, so the image's `HEALTHCHECK` runs the binary
//! itself; Kubernetes probes `/healthz` directly and needs none of this.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::process::ExitCode;
use std::time::Duration;

use crate::cli::HealthcheckArgs;

/// The URL probed for `listen`: a wildcard address is reached on the loopback of its family.
pub(crate) fn probe_url(listen: SocketAddr) -> String {
    let ip = match listen.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    format!("http://{}/healthz", SocketAddr::new(ip, listen.port()))
}

pub async fn run(args: &HealthcheckArgs) -> anyhow::Result<ExitCode> {
    let url = args.url.clone().unwrap_or_else(|| probe_url(args.listen));
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(args.timeout_ms))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()?;
    let shown = crate::secret::redact_url(&url);
    match client.get(&url).send().await {
        Ok(answer) if answer.status() == reqwest::StatusCode::OK => Ok(ExitCode::SUCCESS),
        Ok(answer) => {
            eprintln!("equinix-mcp healthcheck: {shown} answered {}", answer.status());
            Ok(ExitCode::FAILURE)
        }
        Err(e) => {
            eprintln!("equinix-mcp healthcheck: {shown}: {:#}", anyhow::Error::from(e.without_url()));
            Ok(ExitCode::FAILURE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::probe_url;

    #[test]
    fn a_wildcard_listen_address_is_probed_on_its_loopback() {
        assert_eq!(probe_url("0.0.0.0:8931".parse().unwrap()), "http://127.0.0.1:8931/healthz");
        assert_eq!(probe_url("[::]:9000".parse().unwrap()), "http://[::1]:9000/healthz");
        assert_eq!(probe_url("10.0.0.5:8931".parse().unwrap()), "http://10.0.0.5:8931/healthz");
    }
}
