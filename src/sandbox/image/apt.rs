//! The Debian mirror debootstrap uses: `SWE_FORGE_DEBIAN_MIRROR`, else read from the host's
//! apt sources (one-line `.list` files and deb822 `.sources` stanzas).

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;

/// The Debian mirror debootstrap uses: `SWE_FORGE_DEBIAN_MIRROR`, else the first Debian
/// archive (not a security or updates suite) named in the host's apt sources.
pub fn debian_mirror() -> Option<String> {
    if let Ok(m) = std::env::var("SWE_FORGE_DEBIAN_MIRROR") {
        if !m.trim().is_empty() {
            return Some(m.trim().to_string());
        }
    }
    let mut files = vec![PathBuf::from("/etc/apt/sources.list")];
    if let Ok(entries) = fs::read_dir("/etc/apt/sources.list.d") {
        let mut more: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        more.sort();
        files.extend(more);
    }
    let mut entries = Vec::new();
    for file in files {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        match file.extension().and_then(|e| e.to_str()) {
            Some("sources") => entries.extend(parse_deb822_sources(&text)),
            Some("list") => entries.extend(parse_one_line_sources(&text)),
            _ => {}
        }
    }
    pick_debian_mirror(&entries)
}

/// One apt source: a URI and its suites.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AptSource {
    pub uri: String,
    pub suites: Vec<String>,
}

/// `deb [options] URI SUITE COMPONENTS…` lines (`deb-src` and comments skipped).
pub fn parse_one_line_sources(text: &str) -> Vec<AptSource> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut words = line.split_whitespace();
        if words.next() != Some("deb") {
            continue;
        }
        let mut rest: Vec<&str> = words.collect();
        if rest.first().is_some_and(|w| w.starts_with('[')) {
            let end = rest.iter().position(|w| w.ends_with(']')).unwrap_or(0);
            rest.drain(..=end);
        }
        if rest.len() >= 2 {
            out.push(AptSource {
                uri: rest[0].to_string(),
                suites: vec![rest[1].to_string()],
            });
        }
    }
    out
}

/// deb822 `.sources` stanzas (`Types: deb`, `URIs:`, `Suites:`; `Enabled: no` skipped).
pub fn parse_deb822_sources(text: &str) -> Vec<AptSource> {
    let mut out = Vec::new();
    for stanza in text.split("\n\n") {
        let mut fields: HashMap<String, String> = HashMap::new();
        let mut last: Option<String> = None;
        for line in stanza.lines() {
            if line.trim_start().starts_with('#') || line.trim().is_empty() {
                continue;
            }
            if line.starts_with([' ', '\t']) {
                if let Some(k) = &last {
                    let v = fields.entry(k.clone()).or_default();
                    v.push(' ');
                    v.push_str(line.trim());
                }
                continue;
            }
            if let Some((k, v)) = line.split_once(':') {
                let k = k.trim().to_ascii_lowercase();
                fields.insert(k.clone(), v.trim().to_string());
                last = Some(k);
            }
        }
        let has = |k: &str| {
            fields
                .get(k)
                .map(|v| v.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        };
        let types = has("types").unwrap_or_default();
        if !types.iter().any(|t| t == "deb") {
            continue;
        }
        if fields
            .get("enabled")
            .is_some_and(|v| v.eq_ignore_ascii_case("no"))
        {
            continue;
        }
        let suites = has("suites").unwrap_or_default();
        for uri in has("uris").unwrap_or_default() {
            out.push(AptSource {
                uri,
                suites: suites.clone(),
            });
        }
    }
    out
}

/// The first source that looks like Debian's main archive: a Debian suite name without a
/// `-security`/`-updates`/`-backports` suffix, and not a security archive.
pub fn pick_debian_mirror(sources: &[AptSource]) -> Option<String> {
    const SUITES: [&str; 11] = [
        "bookworm",
        "trixie",
        "forky",
        "bullseye",
        "buster",
        "sid",
        "stable",
        "testing",
        "unstable",
        "oldstable",
        "oldoldstable",
    ];
    sources
        .iter()
        .find(|s| {
            (s.uri.starts_with("http://")
                || s.uri.starts_with("https://")
                || s.uri.starts_with("file:"))
                && !s.uri.contains("security")
                && s.suites
                    .iter()
                    .any(|suite| SUITES.contains(&suite.as_str()))
        })
        .map(|s| s.uri.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_one_line_sources() {
        let text = "# comment\ndeb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main\n\
                    deb-src http://mirror.example/debian bookworm main\n\
                    deb http://security.example/debian-security bookworm-security main\n";
        let s = parse_one_line_sources(text);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].uri, "http://mirror.example/debian");
        assert_eq!(s[0].suites, vec!["bookworm"]);
        assert_eq!(
            pick_debian_mirror(&s).as_deref(),
            Some("http://mirror.example/debian")
        );
    }

    #[test]
    fn parses_deb822_sources() {
        let text = "Types: deb\n# a comment\nURIs: http://mirror.example/debian/\nSuites: bookworm bookworm-updates\nComponents: main\n\n\
                    Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n\n\
                    Types: deb\nEnabled: no\nURIs: http://other.example/debian\nSuites: trixie\n";
        let s = parse_deb822_sources(text);
        assert_eq!(s.len(), 2);
        assert_eq!(
            pick_debian_mirror(&s).as_deref(),
            Some("http://mirror.example/debian")
        );
        let only_security = parse_deb822_sources(
            "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n",
        );
        assert_eq!(pick_debian_mirror(&only_security), None);
    }
}
