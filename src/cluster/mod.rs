//! Cluster: a sharded run (`run --shard K/N`, then `merge`) written out for a scheduler users
//! already have — Slurm batch scripts ([`slurm`]) or Kubernetes manifests ([`k8s`]). What goes
//! where is data ([`Plan`]); each engine renders it, and `slurm` can also submit it.
//!
//! The layout both share, under the run's directory OUT: `OUT/shard-K` (shard K's own output
//! directory), `OUT/merged` (the merge), `OUT/images` (saved Docker images, when the plan
//! carries them). The cache (mirrors, checkouts, environments) is one directory every shard
//! reads and writes, so it must be on storage every node sees.

pub mod k8s;
pub mod slurm;

use std::path::{Path, PathBuf};

/// Why a cluster plan could not be written or submitted.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("--shards must be at least 1")]
    NoShards,
    #[error("{0}")]
    Invalid(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    #[error("writing YAML: {0}")]
    Yaml(#[from] serde_yaml::Error),
    #[error("`{command}` failed: {detail}")]
    Submit { command: String, detail: String },
}

pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ClusterError {
    let context = context.into();
    move |source| ClusterError::Io { context, source }
}

/// What a sharded run is, whichever engine runs it.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The swe-forge executable as the nodes call it.
    pub swe_forge: String,
    /// The seed manifest as the nodes see it (`None`: the embedded demo seeds).
    pub manifest: Option<String>,
    /// Shards (array tasks, Job indexes).
    pub shards: usize,
    /// The run's directory as the nodes see it: `shard-K`, `merged` (and `images`) go under it.
    pub out: String,
    /// The cache every shard shares (passed to each command as `--cache`).
    pub cache: Option<String>,
    /// The options of `run` passed through to every shard, as words.
    pub run_args: Vec<String>,
    /// Load Docker images from this directory before a shard runs and save them after
    /// (`swe-forge image load|save DIR`), so shards on fresh nodes reuse built images.
    pub image_dir: Option<String>,
}

impl Plan {
    pub fn validate(&self) -> Result<(), ClusterError> {
        if self.shards == 0 {
            return Err(ClusterError::NoShards);
        }
        for (i, w) in self.run_args.iter().enumerate() {
            let flag = w.split('=').next().unwrap_or(w);
            if matches!(flag, "--shard" | "--out") {
                return Err(ClusterError::Invalid(format!(
                    "`{w}` (word {}) is chosen per shard: leave it out of the run options",
                    i + 1
                )));
            }
        }
        Ok(())
    }

    /// Shard K's output directory.
    pub fn shard_out(&self, k: &str) -> String {
        join(&self.out, &format!("shard-{k}"))
    }

    /// The merged output directory.
    pub fn merged_out(&self) -> String {
        join(&self.out, "merged")
    }

    /// The global options every command gets (` --cache DIR`, or nothing), with a leading
    /// space.
    fn global(&self) -> String {
        match &self.cache {
            Some(c) => format!(" --cache {}", sh_quote(c)),
            None => String::new(),
        }
    }

    /// The POSIX shell lines of shard `$k` (`k` set from `index_var`): load images, `run
    /// --shard "$k/N"` into OUT/shard-$k with the run options (and `--jobs default_jobs` when
    /// they give none), save images; the script exits with `run`'s status. `$swe_forge` is the
    /// executable.
    pub fn shard_lines(&self, index_var: &str, default_jobs: Option<&str>) -> String {
        let n = self.shards;
        let g = self.global();
        let mut s = format!(
            "swe_forge={}\nk=\"${index_var}\"\n",
            sh_quote(&self.swe_forge)
        );
        if let Some(dir) = &self.image_dir {
            s.push_str(&format!(
                "# Images other shards built (none yet on the first run); without them the run\n\
                 # builds what it needs.\n\
                 \"$swe_forge\"{g} image load {} || echo \"image load failed\" >&2\n",
                sh_quote(dir)
            ));
        }
        let mut run = format!("\"$swe_forge\"{g} run");
        if let Some(m) = &self.manifest {
            run.push(' ');
            run.push_str(&sh_quote(m));
        }
        run.push_str(&format!(
            " --shard \"$k/{n}\" --out {}\"$k\"",
            sh_quote(&self.shard_out(""))
        ));
        if !self.run_args.is_empty() {
            run.push(' ');
            run.push_str(&sh_words(&self.run_args));
        }
        let gives_jobs = self
            .run_args
            .iter()
            .any(|w| w == "--jobs" || w.starts_with("--jobs="));
        if let (false, Some(j)) = (gives_jobs, default_jobs) {
            run.push_str(&format!(" --jobs {j}"));
        }
        s.push_str(&format!("status=0\n{run} || status=$?\n"));
        if let Some(dir) = &self.image_dir {
            s.push_str(&format!(
                "# What this shard built, for the next shards and runs.\n\
                 \"$swe_forge\"{g} image save {} || echo \"image save failed\" >&2\n",
                sh_quote(dir)
            ));
        }
        s.push_str("exit \"$status\"\n");
        s
    }

    /// POSIX shell lines that set the positional parameters to the N shard directories.
    pub fn shard_list_lines(&self) -> String {
        format!(
            "set --\nk=0\nwhile [ \"$k\" -lt {n} ]; do set -- \"$@\" {}\"$k\"; k=$((k + 1)); done\n",
            sh_quote(&self.shard_out("")),
            n = self.shards
        )
    }

    /// POSIX shell lines that merge the N shards into OUT/merged (`$swe_forge` set before).
    pub fn merge_lines(&self) -> String {
        format!(
            "{}\"$swe_forge\"{} merge \"$@\" --out {}\n",
            self.shard_list_lines(),
            self.global(),
            sh_quote(&self.merged_out())
        )
    }
}

/// `a/b` for node-side paths (kept as strings: they need not exist here).
fn join(a: &str, b: &str) -> String {
    if a.ends_with('/') {
        format!("{a}{b}")
    } else {
        format!("{a}/{b}")
    }
}

/// One word for a POSIX shell: as it is when it holds only safe characters, else in single
/// quotes (a single quote inside as `'\''`).
pub fn sh_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:=,+@%".contains(&b));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Words as a shell command line.
pub fn sh_words<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| sh_quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Write `text` to `path` (its directory made), executable when `exec`.
pub(crate) fn write_file(path: &Path, text: &str, exec: bool) -> Result<PathBuf, ClusterError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    }
    std::fs::write(path, text).map_err(io(format!("writing {}", path.display())))?;
    #[cfg(unix)]
    if exec {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .map_err(io(format!("making {} executable", path.display())))?;
    }
    Ok(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn plan() -> Plan {
        Plan {
            swe_forge: "/opt/swe forge/bin/swe-forge".into(),
            manifest: Some("/data/seeds.yaml".into()),
            shards: 3,
            out: "/shared/run".into(),
            cache: Some("/shared/cache".into()),
            run_args: vec![
                "--sandbox".into(),
                "local".into(),
                "--seed".into(),
                "3".into(),
            ],
            image_dir: None,
        }
    }

    #[test]
    fn words_are_quoted_for_the_shell() {
        assert_eq!(sh_quote("--seed"), "--seed");
        assert_eq!(sh_quote("/a/b.yaml"), "/a/b.yaml");
        assert_eq!(sh_quote(""), "''");
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
        assert_eq!(sh_quote("$HOME"), "'$HOME'");
        assert_eq!(sh_words(&["a", "b c"]), "a 'b c'");
    }

    #[test]
    fn a_plan_refuses_per_shard_options_and_no_shards() {
        let mut p = plan();
        assert!(p.validate().is_ok());
        p.run_args.push("--out=x".into());
        assert!(matches!(p.validate(), Err(ClusterError::Invalid(_))));
        let mut p = plan();
        p.run_args.extend(["--shard".into(), "0/2".into()]);
        assert!(p.validate().is_err());
        let mut p = plan();
        p.shards = 0;
        assert!(matches!(p.validate(), Err(ClusterError::NoShards)));
        assert_eq!(plan().shard_out("$k"), "/shared/run/shard-$k");
        assert_eq!(plan().merged_out(), "/shared/run/merged");
    }
}
