//! Loading rules: from YAML text, from a directory of rule files, or from the rules compiled
//! into the binary.

use super::compile::compile;
use super::spec::{yaml_error, RuleSpec};
use super::{invalid, Mutator, MutatorError};
use crate::lang::Language;
use include_dir::{include_dir, Dir};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

/// The rules compiled into the binary.
static EMBEDDED: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/mutators");

/// Load one rule from YAML text; `name` is what errors call the file.
pub fn load_str(name: &str, yaml: &str) -> Result<Mutator, MutatorError> {
    let spec: RuleSpec = serde_yaml::from_str(yaml).map_err(|e| yaml_error(name, &e))?;
    compile(name, spec)
}

/// Load one rule from YAML text for `lang`: a rule of another language that names `lang`
/// under `also` is compiled for `lang`'s grammar (its examples checked there too); `None`
/// when the rule is for another language and does not.
fn load_for(name: &str, yaml: &str, lang: Language) -> Result<Option<Mutator>, MutatorError> {
    let mut spec: RuleSpec = serde_yaml::from_str(yaml).map_err(|e| yaml_error(name, &e))?;
    if spec.language != lang {
        if !spec.also.contains(&lang) {
            return Ok(None);
        }
        spec.language = lang;
    }
    compile(name, spec).map(Some)
}

/// Load every `*.yaml` rule in `dir` (sorted by name); all must be valid rules for `lang`,
/// named after their id, with no id twice.
pub fn load_dir(dir: &Path, lang: Language) -> Result<Vec<Mutator>, MutatorError> {
    let files = rule_files(dir)?
        .into_iter()
        .map(|(n, t)| (n, t, false))
        .collect();
    load_all(files, lang)
}

/// Load `lang`'s rules from a tree laid out like `mutators/`: `ROOT/<lang>/*.yaml`, and the
/// rules of the folders it borrows from (TypeScript: `ROOT/javascript/`) that name it under
/// `also`. A language that borrows may have no folder of its own.
pub fn load_tree(root: &Path, lang: Language) -> Result<Vec<Mutator>, MutatorError> {
    let mut files = Vec::new();
    let folders = rule_folders(lang);
    let borrows = folders.iter().any(|(_, b)| *b);
    for (folder, borrowed) in folders {
        let dir = root.join(folder);
        if (borrowed || borrows) && !dir.is_dir() {
            continue;
        }
        files.extend(rule_files(&dir)?.into_iter().map(|(n, t)| (n, t, borrowed)));
    }
    load_all(files, lang)
}

/// The `*.yaml` files of `dir`, sorted by name: (path, text).
fn rule_files(dir: &Path) -> Result<Vec<(String, String)>, MutatorError> {
    let io = |e| MutatorError::Io {
        file: dir.display().to_string(),
        source: e,
    };
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_file() && path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            paths.push(path);
        }
    }
    paths.sort();
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|e| MutatorError::Io {
            file: name.clone(),
            source: e,
        })?;
        files.push((name, text));
    }
    Ok(files)
}

/// The embedded folders whose rules `lang` loads: its own, then those whose rules may name it
/// under `also` (borrowed: only the rules that do are loaded).
fn rule_folders(lang: Language) -> Vec<(&'static str, bool)> {
    let mut folders = vec![(lang.name(), false)];
    if lang == Language::TypeScript {
        folders.push((Language::JavaScript.name(), true));
    }
    folders
}

/// The rules compiled into the binary for `lang` (`mutators/<lang>/*.yaml`); compiled once
/// per process.
pub fn load_embedded(lang: Language) -> Result<Vec<Mutator>, MutatorError> {
    static CACHE: OnceLock<Mutex<HashMap<Language, Vec<Mutator>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(rules) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&lang) {
        return Ok(rules.clone());
    }
    let mut files = Vec::new();
    for (folder, borrowed) in rule_folders(lang) {
        let Some(dir) = EMBEDDED.get_dir(folder) else {
            continue;
        };
        let mut entries: Vec<_> = dir
            .files()
            .filter(|f| {
                f.path()
                    .extension()
                    .is_some_and(|e| e == "yaml" || e == "yml")
            })
            .collect();
        entries.sort_by_key(|f| f.path());
        for f in entries {
            let name = format!("mutators/{}", f.path().display());
            let text = f
                .contents_utf8()
                .ok_or_else(|| invalid(&name, "(document)", "not UTF-8"))?;
            files.push((name, text.to_string(), borrowed));
        }
    }
    let rules = load_all(files, lang)?;
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(lang, rules.clone());
    Ok(rules)
}

/// Compile `files` (name, text, borrowed from another language's folder) for `lang`: every
/// file of `lang`'s own is a rule for it (or names it under `also`); a borrowed file that does
/// not name `lang` is skipped.
fn load_all(
    files: Vec<(String, String, bool)>,
    lang: Language,
) -> Result<Vec<Mutator>, MutatorError> {
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut rules = Vec::with_capacity(files.len());
    for (name, text, borrowed) in files {
        let Some(rule) = load_for(&name, &text, lang)? else {
            if borrowed {
                continue;
            }
            let rule = load_str(&name, &text)?;
            return Err(invalid(
                &name,
                "language",
                format!("a {} rule in the {} rules", rule.language, lang),
            ));
        };
        let stem = Path::new(&name)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("");
        if stem != rule.id {
            return Err(invalid(
                &name,
                "id",
                format!(
                    "id `{}` does not match the file name (expected `{stem}`)",
                    rule.id
                ),
            ));
        }
        if let Some(first) = seen.get(&rule.id) {
            return Err(MutatorError::DuplicateId {
                file: name,
                id: rule.id,
                first: first.clone(),
            });
        }
        seen.insert(rule.id.clone(), name);
        rules.push(rule);
    }
    Ok(rules)
}
