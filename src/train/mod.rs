//! Training: episodes (prompts and edits), verified rewards.

pub mod episode;
pub mod reward;
