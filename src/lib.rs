//! swe-forge: turns real repositories into fresh, verified software-engineering tasks.
//!
//! The pipeline (see DESIGN.md): import seeds → mutate → baseline → screen → verify → issue →
//! emit. Each stage is a module with typed input and output; `pipeline` wires them together.

pub mod assets;
pub mod audit;
pub mod baseline;
pub mod bench;
pub mod canary;
pub mod candidate;
pub mod check;
pub mod cluster;
pub mod coverage;
pub mod curriculum;
pub mod export;
pub mod fingerprint;
pub mod grading;
pub mod issue;
pub mod issue_llm;
pub mod lang;
pub mod leak;
pub mod lock;
pub mod merge;
pub mod mutator;
pub mod patch;
pub mod peer;
pub mod pipeline;
pub mod replay;
pub mod repo;
pub mod report;
pub mod run;
pub mod runner;
pub mod sandbox;
pub mod seed;
pub mod serve;
pub mod shard;
pub mod start_state;
pub mod status;
pub mod store;
pub mod synth;
pub mod task;
pub mod task_images;
pub mod timeouts;
pub mod toolchain;
pub mod train;
pub mod verdict;
pub mod verify;

/// The tool version recorded in every task's evidence.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
