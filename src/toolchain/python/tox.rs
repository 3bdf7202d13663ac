//! What tox's `[testenv]` adds to a project for its tests, read from `tox.ini` with an INI
//! parser (Python's `configparser` rules, as tox reads it) and resolved for the default
//! environment the way tox does: factor-conditional lines (`py38,py39: x`, `a-b: x`, `!a: x`)
//! kept or dropped, `#` comments and `\` continuations, `{[section]key}` references replaced.

use configparser::ini::{Ini, IniDefault};

/// What tox's `[testenv]` adds to the project for its tests, for its default environment:
/// `deps` (plain requirements; `-r`/`-c` and other option lines, and lines with a
/// substitution left, such as `{posargs}` or `{toxinidir}`, are left out), `extras` and
/// `dependency_groups`.
#[derive(Debug, Default, PartialEq)]
pub(super) struct ToxTestenv {
    pub(super) deps: Vec<String>,
    pub(super) extras: Vec<String>,
    pub(super) dependency_groups: Vec<String>,
    /// Requirement files its `deps` name with `-r` whose file name says they are for tests
    /// (`-r requirements-tests39.txt`), as written (relative to `tox.ini`).
    pub(super) requirement_files: Vec<String>,
}

/// How deep `{[section]key}` references are followed (a reference loop ends there).
const MAX_REFERENCE_DEPTH: usize = 8;

impl ToxTestenv {
    /// `[testenv]` of a `tox.ini`, for the first environment of `[tox]`'s `env_list` (or
    /// `envlist`); with none, no factor is active. A file the parser refuses adds nothing.
    pub(super) fn parse(ini: &str) -> ToxTestenv {
        let mut defaults = IniDefault::default();
        defaults.case_sensitive = true;
        defaults.multiline = true;
        // Comments are whole lines for the parser; tox's own ` #` comments are cut per line
        // below, so that `;` (environment markers) and `#` inside a URL survive.
        defaults.enable_inline_comments = false;
        let mut config = Ini::new_from_defaults(defaults);
        if config.read(ini.to_string()).is_err() {
            return ToxTestenv::default();
        }
        let env_list = config
            .get("tox", "env_list")
            .or_else(|| config.get("tox", "envlist"))
            .unwrap_or_default();
        let env = env_names(&env_list).into_iter().next();
        let factors: Vec<String> = env
            .as_deref()
            .map(|e| e.split('-').map(str::to_string).collect())
            .unwrap_or_default();
        let lines = |key: &str| -> Vec<String> {
            config
                .get("testenv", key)
                .map(|v| resolve(&config, &v, &factors, 0))
                .unwrap_or_default()
        };
        let items = |lines: Vec<String>, comma_separated: bool| -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            for line in &lines {
                let parts: Vec<&str> = if comma_separated {
                    line.split(',').collect()
                } else {
                    vec![line.as_str()]
                };
                for item in parts.into_iter().map(str::trim) {
                    if item.is_empty() || item.starts_with('-') || item.contains(['{', '}']) {
                        continue;
                    }
                    if !out.iter().any(|x| x == item) {
                        out.push(item.to_string());
                    }
                }
            }
            out
        };
        let requirement_files: Vec<String> = lines("deps")
            .iter()
            .filter_map(|l| {
                let rest = l.trim().strip_prefix("-r")?;
                let file = rest.trim_start_matches('=').trim();
                let name = file.rsplit('/').next().unwrap_or(file);
                (!file.is_empty() && !file.contains(['{', '}', ' ']) && name.contains("test"))
                    .then(|| file.to_string())
            })
            .collect();
        ToxTestenv {
            requirement_files,
            deps: items(lines("deps"), false),
            extras: items(lines("extras"), true),
            dependency_groups: items(lines("dependency_groups"), true),
        }
    }
}

/// The lines of a raw value for an environment with `factors`: comments cut, `\`
/// continuations joined, factor-conditional lines kept (their condition stripped) or dropped,
/// and `{[section]key}` references replaced by the lines of what they name.
fn resolve(config: &Ini, raw: &str, factors: &[String], depth: usize) -> Vec<String> {
    let mut joined: Vec<String> = Vec::new();
    let mut continued = false;
    for line in raw.lines() {
        let line = strip_comment(line);
        let (line, continues) = match line.trim_end().strip_suffix('\\') {
            Some(l) => (l.to_string(), true),
            None => (line.trim_end().to_string(), false),
        };
        match joined.last_mut() {
            Some(last) if continued => {
                last.push(' ');
                last.push_str(line.trim());
            }
            _ => joined.push(line.trim().to_string()),
        }
        continued = continues;
    }
    let mut out = Vec::new();
    for line in joined {
        let Some(kept) = for_factors(&line, factors) else {
            continue;
        };
        if kept.is_empty() {
            continue;
        }
        match reference(&kept) {
            Some((before, section, key, after)) if depth < MAX_REFERENCE_DEPTH => {
                if let Some(value) = config.get(section, key) {
                    let inner = resolve(config, &value, factors, depth + 1);
                    let n = inner.len();
                    for l in inner {
                        let l = if n == 1 {
                            format!("{before}{l}{after}")
                        } else {
                            l
                        };
                        out.push(l);
                    }
                }
                // An unknown section or key: the line goes (tox would refuse the file).
            }
            _ => out.push(kept),
        }
    }
    out
}

/// A line less its comment: `#` at its start or after whitespace, unless escaped (`\#`, which
/// becomes `#`).
fn strip_comment(line: &str) -> String {
    let bytes = line.as_bytes();
    let mut cut = line.len();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'#'
            && (i == 0 || bytes[i - 1].is_ascii_whitespace())
            && (i == 0 || bytes[i - 1] != b'\\')
        {
            cut = i;
            break;
        }
    }
    line[..cut].replace("\\#", "#")
}

/// The first `{[section]key}` of a line: (text before, section, key, text after).
fn reference(line: &str) -> Option<(&str, &str, &str, &str)> {
    let start = line.find("{[")?;
    let rest = &line[start + 2..];
    let close = rest.find(']')?;
    let end = rest[close..].find('}')? + close;
    let section = &rest[..close];
    let key = rest[close + 1..end].trim();
    Some((&line[..start], section.trim(), key, &rest[end + 1..]))
}

/// A line as the environment with `factors` sees it: `None` when its factor condition does not
/// hold, else the line less its condition. A condition is what comes before the first `:`
/// when it reads as factor names: alternatives separated by `,` (any of them), each one or more
/// factors joined by `-` (all of them), a factor negated by a leading `!`; `{a,b}` expands
/// into alternatives as in tox. Anything else (`git+https://…`) is a line without one.
fn for_factors(line: &str, factors: &[String]) -> Option<String> {
    let Some((condition, content)) = line.split_once(':') else {
        return Some(line.to_string());
    };
    let alternatives = env_names(condition);
    let factor_name = |f: &str| {
        let f = f.strip_prefix('!').unwrap_or(f);
        !f.is_empty()
            && f.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.'))
    };
    if alternatives.is_empty() || !alternatives.iter().all(|a| a.split('-').all(factor_name)) {
        return Some(line.to_string());
    }
    let holds = alternatives.iter().any(|alternative| {
        alternative.split('-').all(|f| match f.strip_prefix('!') {
            Some(negated) => !factors.iter().any(|x| x == negated),
            None => factors.iter().any(|x| x == f),
        })
    });
    holds.then(|| content.trim().to_string())
}

/// Environment names as tox writes them in `env_list` (and factor conditions): separated by
/// commas or line breaks outside braces, each `{a,b}` group expanded (`py3{8,9}-x` → `py38-x`,
/// `py39-x`), in order.
fn env_names(list: &str) -> Vec<String> {
    let mut groups: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in list.chars() {
        match c {
            '{' => {
                depth += 1;
                current.push(c);
            }
            '}' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' | '\n' if depth == 0 => groups.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    groups.push(current);
    let mut out = Vec::new();
    for group in groups {
        let group = group.trim();
        if group.is_empty() {
            continue;
        }
        // The product of the brace groups' alternatives.
        let mut variants = vec![String::new()];
        let mut rest = group;
        while !rest.is_empty() {
            let (literal, tail) = match rest.find('{') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest, ""),
            };
            for v in &mut variants {
                v.push_str(literal);
            }
            if tail.is_empty() {
                break;
            }
            let Some(close) = tail.find('}') else {
                for v in &mut variants {
                    v.push_str(tail);
                }
                break;
            };
            let choices: Vec<&str> = tail[1..close].split(',').map(str::trim).collect();
            variants = variants
                .iter()
                .flat_map(|v| choices.iter().map(move |c| format!("{v}{c}")))
                .collect();
            rest = &tail[close + 1..];
        }
        out.extend(variants);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factor_conditional_deps_for_the_default_environment() {
        let ini = "[tox]\nenv_list = py39-unidecode, pypy3\n\n[testenv]\ndeps =\n    pytest\n    \
                   unidecode: Unidecode>=1.1.1\n    py38,py39: backports.zoneinfo\n    \
                   !pypy3: lxml\n    pypy3: cffi\n    py39-!unidecode: simplejson\n";
        let env = ToxTestenv::parse(ini);
        assert_eq!(
            env.deps,
            ["pytest", "Unidecode>=1.1.1", "backports.zoneinfo", "lxml"]
        );
        // With no env_list, no factor is active: only the unconditional and negated lines.
        let env = ToxTestenv::parse(&ini.replace("env_list = py39-unidecode, pypy3\n", ""));
        assert_eq!(env.deps, ["pytest", "lxml"]);
        // tox 3's `envlist`, braces expanded: the first environment is `py38-unidecode`.
        let env = ToxTestenv::parse(&ini.replace(
            "env_list = py39-unidecode, pypy3",
            "envlist =\n    py{38,39}-{unidecode,plain}\n    pypy3",
        ));
        assert_eq!(
            env.deps,
            ["pytest", "Unidecode>=1.1.1", "backports.zoneinfo", "lxml"]
        );
    }

    #[test]
    fn comments_continuations_references_and_options() {
        let ini = "[tox]\nenvlist = py3\n\n[base]\ndeps =\n    attrs\n    py3: hypothesis\n\n\
                   [testenv]\n; a whole-line comment\ndeps =\n    # commented out\n    \
                   pytest-mock  # mocks\n    -r requirements/docs.txt\n    -c constraints.txt\n    \
                   {[base]deps}\n    {[missing]deps}\n    {toxinidir}/local\n    \
                   git+https://example.org/x.git#egg=x\n    requests[socks] \\\n        >=2\n    \
                   colorama; sys_platform == \"win32\"\nextras =\n    tests,\n    py3: yaml\n    \
                   docs: sphinx\ndependency_groups = dev\ncommands = pytest {posargs}\n\n\
                   [testenv:docs]\ndeps = sphinx\n";
        let env = ToxTestenv::parse(ini);
        assert_eq!(
            env.deps,
            [
                "pytest-mock",
                "attrs",
                "hypothesis",
                "git+https://example.org/x.git#egg=x",
                "requests[socks] >=2",
                "colorama; sys_platform == \"win32\"",
            ]
        );
        assert_eq!(env.extras, ["tests", "yaml"]);
        assert_eq!(env.dependency_groups, ["dev"]);
    }

    #[test]
    fn tox_testenv_lists() {
        let env = ToxTestenv::parse(
            "[testenv]\npackage = editable\ndeps = pytest-mock  # mocks\nextras = tests, yaml\n\
             dependency_groups = dev\npass_env =\n    FORCE_COLOR\n[testenv:docs]\ndeps = sphinx\n",
        );
        assert_eq!(env.deps, ["pytest-mock"]);
        assert_eq!(env.extras, ["tests", "yaml"]);
        assert_eq!(env.dependency_groups, ["dev"]);
        assert_eq!(
            ToxTestenv::parse("[tox]\nenv_list = py3\n"),
            ToxTestenv::default()
        );
        // A file the parser refuses adds nothing.
        assert_eq!(
            ToxTestenv::parse("[testenv\ndeps = x\n"),
            ToxTestenv::default()
        );
    }

    #[test]
    fn environment_names_expand_braces() {
        assert_eq!(
            env_names("py{38,39}-django{32, 40}, lint\nfmt"),
            [
                "py38-django32",
                "py38-django40",
                "py39-django32",
                "py39-django40",
                "lint",
                "fmt"
            ]
        );
        assert_eq!(env_names(" "), Vec::<String>::new());
    }
}
