//! Which names and pages may drive the server: the `Host` and `Origin` checks that keep a web
//! page in a browser on the same host from using it (DNS rebinding, cross-site WebSocket
//! hijacking), and the token a server bound beyond loopback gets when none is given.

use std::net::{IpAddr, SocketAddr};

/// What a request may name.
#[derive(Clone, Debug)]
pub struct Allowed {
    /// The address the server was asked to bind.
    addr: SocketAddr,
    /// `--allow-origin` values: origins (`https://app.example`) a page may come from; `*`
    /// allows every origin.
    origins: Vec<String>,
}

/// The host part of a `Host` header or an origin's authority (`[::1]:8080` → `::1`).
fn host_of(authority: &str) -> &str {
    let a = authority.trim();
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    match a.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => a,
    }
}

/// A loopback name: `localhost` (and names under it), or a loopback address.
fn is_loopback_name(host: &str) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    h == "localhost"
        || h.ends_with(".localhost")
        || h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl Allowed {
    pub fn new(addr: SocketAddr, origins: &[String]) -> Allowed {
        Allowed {
            addr,
            origins: origins
                .iter()
                .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
                .filter(|o| !o.is_empty())
                .collect(),
        }
    }

    /// Whether `host` names this server: a loopback name, or the address it was asked to bind.
    /// A server bound to every address (`0.0.0.0`, `::`) answers to any name (it needs its
    /// token there).
    fn names_us(&self, host: &str) -> bool {
        if self.addr.ip().is_unspecified() {
            return true;
        }
        is_loopback_name(host) || host.parse::<IpAddr>().is_ok_and(|ip| ip == self.addr.ip())
    }

    /// Why a request with these `Host` and `Origin` headers is refused, if it is. A request
    /// without them (a program, not a browser) is let through.
    pub fn refuse(&self, host: Option<&str>, origin: Option<&str>) -> Option<String> {
        if let Some(h) = host {
            if !self.names_us(host_of(h)) {
                return Some(format!(
                    "the Host header `{h}` does not name this server (loopback names and {} only)",
                    self.addr.ip()
                ));
            }
        }
        let origin = origin?.trim();
        let o = origin.trim_end_matches('/').to_ascii_lowercase();
        if self.origins.iter().any(|a| a == "*" || *a == o) {
            return None;
        }
        let authority = o
            .strip_prefix("http://")
            .or_else(|| o.strip_prefix("https://"));
        match authority {
            Some(a) if self.names_us(host_of(a)) && !self.addr.ip().is_unspecified() => None,
            Some(a) if self.addr.ip().is_unspecified() && is_loopback_name(host_of(a)) => None,
            _ => Some(format!(
                "requests from pages of `{origin}` are refused (loopback origins only, unless \
                 --allow-origin names it)"
            )),
        }
    }
}

/// A random token (128 bits, hex) for a server bound beyond loopback without one.
pub fn random_token() -> String {
    use rand::RngCore;
    let mut b = [0u8; 16];
    rand::rng().fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback() -> Allowed {
        Allowed::new("127.0.0.1:8080".parse().unwrap(), &[])
    }

    #[test]
    fn loopback_names_pass_and_others_are_refused() {
        let a = loopback();
        for h in [
            "127.0.0.1:8080",
            "localhost:8080",
            "localhost",
            "[::1]:8080",
            "app.localhost",
        ] {
            assert_eq!(a.refuse(Some(h), None), None, "{h}");
        }
        // DNS rebinding: a name of the attacker's that resolves to 127.0.0.1.
        assert!(a.refuse(Some("evil.example:8080"), None).is_some());
        assert!(a.refuse(Some("10.0.0.5:8080"), None).is_some());
        assert_eq!(a.refuse(None, None), None, "a program sends no Host");
    }

    #[test]
    fn only_loopback_or_allowed_origins_pass() {
        let a = loopback();
        assert_eq!(
            a.refuse(Some("127.0.0.1:8080"), Some("http://127.0.0.1:8080")),
            None
        );
        assert_eq!(
            a.refuse(Some("localhost:8080"), Some("http://localhost:3000")),
            None
        );
        assert!(a
            .refuse(Some("127.0.0.1:8080"), Some("https://evil.example"))
            .is_some());
        assert!(a.refuse(Some("127.0.0.1:8080"), Some("null")).is_some());
        let allowed = Allowed::new(
            "127.0.0.1:8080".parse().unwrap(),
            &["https://Trainer.example/".to_string()],
        );
        assert_eq!(
            allowed.refuse(Some("127.0.0.1:8080"), Some("https://trainer.example")),
            None
        );
        let any = Allowed::new("127.0.0.1:8080".parse().unwrap(), &["*".to_string()]);
        assert_eq!(any.refuse(None, Some("https://evil.example")), None);
    }

    #[test]
    fn a_server_on_every_address_answers_to_any_name_but_not_to_foreign_pages() {
        let a = Allowed::new("0.0.0.0:8080".parse().unwrap(), &[]);
        assert_eq!(a.refuse(Some("gpu-box.internal:8080"), None), None);
        assert!(a
            .refuse(Some("gpu-box.internal:8080"), Some("https://evil.example"))
            .is_some());
        let specific = Allowed::new("10.1.2.3:8080".parse().unwrap(), &[]);
        assert_eq!(
            specific.refuse(Some("10.1.2.3:8080"), Some("http://10.1.2.3:8080")),
            None
        );
        assert!(specific.refuse(Some("10.9.9.9"), None).is_some());
    }

    #[test]
    fn tokens_are_fresh() {
        let (a, b) = (random_token(), random_token());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
