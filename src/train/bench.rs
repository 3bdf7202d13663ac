//! Throughput of the policy's training computation: forward and backward passes over one
//! sequence, timed (what a `bench train` command reports).

use std::time::Instant;

use serde::Serialize;

use super::{Policy, TrainError};

/// Measured throughput of forward + backward passes.
#[derive(Debug, Clone, Serialize)]
pub struct Throughput {
    /// The sequence length of each pass.
    pub seq_len: usize,
    /// The number of timed passes (after one untimed warm-up pass).
    pub repeats: usize,
    pub parameters: usize,
    pub seconds: f64,
    /// Sequence tokens processed per second, forward and backward together.
    pub tokens_per_s: f64,
    /// The loss of the last pass (a mean negative log-likelihood, for sanity).
    pub loss: f32,
}

/// Times `repeats` forward + backward passes of the SFT loss over a sequence of `seq_len`
/// tokens (token ids cycling through the vocabulary), after one untimed warm-up pass.
pub fn forward_backward(
    policy: &Policy,
    seq_len: usize,
    repeats: usize,
) -> Result<Throughput, TrainError> {
    if seq_len == 0 || repeats == 0 {
        return Err(TrainError::Input(
            "the benchmark needs a sequence of at least 1 token and at least 1 repeat".into(),
        ));
    }
    let vocab = policy.config().vocab_size as u32;
    let ids: Vec<u32> = (0..=seq_len as u32)
        .map(|i| (i * 7919 + 13) % vocab)
        .collect();
    // One prompt token and `seq_len` target tokens: the model reads `seq_len` positions and
    // predicts a token at each; the loss covers them all.
    let (prompt, target) = ids.split_at(1);
    let mut loss = policy.sft_loss(prompt, target)?;
    loss.backward()?;
    let start = Instant::now();
    for _ in 0..repeats {
        loss = policy.sft_loss(prompt, target)?;
        loss.backward()?;
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(Throughput {
        seq_len,
        repeats,
        parameters: policy.num_parameters(),
        seconds,
        tokens_per_s: (seq_len * repeats) as f64 / seconds,
        loss: loss.to_scalar::<f32>()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::tokenizer::train_bpe;
    use candle_core::Device;

    // The benchmark counts the tokens it ran, and a fresh model's loss is near ln(vocab)
    // (near-uniform predictions from the small initialization).
    #[test]
    fn measures_a_fresh_model() {
        let tok = train_bpe(["def f(x):\n    return x\n"; 8].iter(), 300).unwrap();
        let policy = Policy::small(0, tok, &Device::Cpu).unwrap();
        let t = forward_backward(&policy, 24, 2).unwrap();
        assert_eq!((t.seq_len, t.repeats), (24, 2));
        assert_eq!(t.parameters, policy.num_parameters());
        assert!(t.seconds > 0.0 && t.tokens_per_s > 0.0);
        let uniform = (policy.config().vocab_size as f32).ln();
        assert!(
            (t.loss - uniform).abs() < 0.5,
            "loss {} vs ln(vocab) {uniform}",
            t.loss
        );
        assert!(forward_backward(&policy, 0, 1).is_err());
    }
}
