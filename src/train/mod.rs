//! The policy trained on tasks: a Qwen2-architecture causal language model on candle, its
//! tokenizer, Hugging Face checkpoint directories, and the optimizer.
//!
//! - [`config`]: `Qwen2Config`, read from and written to a checkpoint's `config.json`;
//! - [`model`]: the differentiable Qwen2 forward pass (every op records a gradient);
//! - [`tokenizer`]: `tokenizer.json` loading and the project's own byte-level BPE;
//! - [`checkpoint`]: the Hugging Face directory layout (config, tokenizer, safetensors shards);
//! - [`policy`]: [`Policy`], the API the training loop calls (sample, log-probs, losses);
//! - [`optim`]: AdamW with global gradient-norm clipping;
//! - [`bench`]: forward + backward throughput.
//!
//! - [`episode`]: prompts from a task, the SEARCH/REPLACE edit format, gold edits;
//! - [`reward`]: verified rewards in the sandbox, cached in `rewards.db`;
//! - [`grpo`]: group advantages and the clipped policy loss;
//! - [`trainer`]: the `train` loop (warm-start, GRPO, metrics, checkpoints);
//! - [`generator`]: multi-bug tasks generated and verified while training runs.
//!
//! Weights are `f32` variables on every device; on CUDA (cargo feature `cuda`) the forward pass
//! computes in `bf16` with norms, softmax and log-probs in `f32`.
//!
//! Threads: candle's CPU kernels run on its own pool, `CANDLE_NUM_THREADS` threads (default:
//! the physical cores), whose workers spin at a barrier between ops; on cores shared with other
//! work that spinning can make a step several times slower than one thread, so set the variable
//! (before the first tensor op) when the cores are not yours alone.

pub mod bench;
pub mod checkpoint;
pub mod config;
pub mod episode;
pub mod generator;
pub mod grpo;
pub mod model;
pub mod optim;
pub mod policy;
pub mod reward;
pub mod tokenizer;
pub mod trainer;

use std::path::PathBuf;

pub use candle_core::{DType, Device, Tensor, Var};
pub use config::Qwen2Config;
pub use model::Qwen2;
pub use optim::{Optimizer, OptimizerConfig, StepStats};
pub use policy::{Policy, Sample};

/// Everything that can go wrong while building, loading, running or training the policy.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// A bad or incomplete `config.json` (the message names the key at fault).
    #[error("{}: {message}", file.display())]
    Config { file: PathBuf, message: String },
    /// A checkpoint whose weights are missing, misshapen or unreadable (the message names the
    /// tensor at fault).
    #[error("{}: {message}", file.display())]
    Checkpoint { file: PathBuf, message: String },
    /// A tokenizer that cannot be read, trained, saved or used.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// A file that cannot be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A request the model cannot serve (empty prompt, sequence longer than the model allows…).
    #[error("{0}")]
    Input(String),
    /// A non-finite loss or gradient: the step was not taken.
    #[error("non-finite {0}: the optimizer step was skipped")]
    NonFinite(&'static str),
    /// An error from the tensor library.
    #[error("tensor: {0}")]
    Candle(#[from] candle_core::Error),
}

impl TrainError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        TrainError::Io {
            path: path.into(),
            source,
        }
    }
}

/// The device to train on: the first CUDA GPU when built with the `cuda` feature and one is
/// present, the CPU otherwise.
pub fn default_device() -> Result<Device, TrainError> {
    Ok(Device::cuda_if_available(0)?)
}

/// The dtype the forward pass computes in on `device`: `bf16` on CUDA, `f32` elsewhere.
pub fn compute_dtype(device: &Device) -> DType {
    if device.is_cuda() {
        DType::BF16
    } else {
        DType::F32
    }
}
