//! `serve`: the environment and reward server (see `docs/serve.md`).

use super::args::ServeArgs;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::time::Duration;
use swe_forge::sandbox::Limits;

/// `serve`: runs until interrupted; exit 0.
pub(crate) fn serve(args: ServeArgs, cache: PathBuf) -> Result<i32> {
    let db = args.db.clone().unwrap_or_else(|| {
        args.tasks
            .parent()
            .map(|d| d.join("serve.db"))
            .unwrap_or_else(|| PathBuf::from("serve.db"))
    });
    let cfg = swe_forge::serve::ServeConfig {
        tasks: args.tasks.clone(),
        addr: args.addr,
        max_sessions: args.max_sessions.max(1),
        pool: args.pool,
        sandbox: args.sandbox,
        cache,
        // The container's whole writable layer, where the storage driver can limit it: the
        // repository's allowance and as much again for the rest (caches, the agent's
        // installs); the repository's own size is checked after each step in any case.
        limits: Limits {
            storage_bytes: Some(args.max_tree_mb.max(1).saturating_mul(2) << 20),
            ..Limits::default()
        },
        token: args.token.filter(|t| !t.is_empty()),
        idle_timeout: Duration::from_secs(args.idle_timeout.max(1)),
        grade_repeats: args.grade_repeats.max(1),
        zero_flagged: !args.reward_flagged,
        unsafe_local: args.unsafe_local,
        id_style: args.id_style,
        db,
        seed: args.seed,
        generate: args.generate,
        generate_batch: args.generate_batch,
        manifest: args.manifest,
        target: args.target,
        allow_origins: args.allow_origin,
        max_tree_mb: args.max_tree_mb.max(1),
    };
    swe_forge::serve::serve(cfg).with_context(|| format!("serving {}", args.tasks.display()))?;
    Ok(0)
}
