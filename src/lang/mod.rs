//! The languages swe-forge mutates: tree-sitter grammars and per-language facts behind one small enum.

pub mod java;
pub mod python;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// A source language swe-forge knows how to parse, mutate and test.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Python,
    Java,
}

impl Language {
    pub const ALL: [Language; 2] = [Language::Python, Language::Java];

    /// Lower-case name, as used in manifests, mutator folders and task records.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Java => "java",
        }
    }

    /// The tree-sitter grammar.
    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
        }
    }

    /// File extensions (without the dot) of source files in this language.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Language::Python => &["py"],
            Language::Java => &["java"],
        }
    }

    /// Whether `path` has one of this language's extensions.
    pub fn matches_path(self, path: &Path) -> bool {
        path.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| self.extensions().contains(&e))
    }

    /// Whether a repository-relative path is a test file rather than a source file.
    pub fn is_test_path(self, rel: &str) -> bool {
        match self {
            Language::Python => python::is_test_path(rel),
            Language::Java => java::is_test_path(rel),
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Language {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "python" | "py" => Ok(Language::Python),
            "java" => Ok(Language::Java),
            other => Err(format!("unknown language `{other}` (expected python or java)")),
        }
    }
}
