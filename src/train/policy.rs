//! `Policy`: the model, its tokenizer and its trainable variables, with what the training loop
//! calls: sampling completions, differentiable per-token log-probs, a supervised loss, and
//! checkpoint directories.

use std::path::Path;

use candle_core::{DType, Device, Tensor, Var, D};
use candle_nn::{VarBuilder, VarMap};
use rand::rngs::StdRng;
use rand::Rng;
use tokenizers::Tokenizer;

use super::checkpoint::{self, CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE};
use super::config::Qwen2Config;
use super::model::{log_softmax_last_dim, KvCache, Qwen2};
use super::tokenizer::{self as tok, EOS_TOKEN};
use super::{compute_dtype, TrainError};

/// End-of-sequence tokens looked for in a tokenizer when `config.json` names none.
const EOS_CANDIDATES: &[&str] = &[EOS_TOKEN, "<|im_end|>", "</s>"];

/// One sampled completion.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The generated token ids, the end-of-sequence token included when `finished`.
    pub tokens: Vec<u32>,
    /// Per token, its log-probability under the model (at temperature 1, whatever the sampling
    /// temperature), as [`Policy::completion_logprobs`] computes it with the same weights.
    pub logprobs: Vec<f32>,
    /// Whether the completion ended with an end-of-sequence token (rather than `max_new`).
    pub finished: bool,
}

/// A causal language model with its tokenizer, ready to sample and to train.
pub struct Policy {
    model: Qwen2,
    tokenizer: Tokenizer,
    varmap: VarMap,
    device: Device,
    dtype: DType,
    config: Qwen2Config,
    eos_ids: Vec<u32>,
}

impl Policy {
    /// The small randomly initialized model ([`Qwen2Config::small`]) over `tokenizer`'s
    /// vocabulary; `tokenizer` must have the [`EOS_TOKEN`] (the project's BPE has).
    pub fn small(seed: u64, tokenizer: Tokenizer, device: &Device) -> Result<Self, TrainError> {
        let config = Qwen2Config::small(tokenizer.get_vocab_size(true));
        Self::from_config(config, tokenizer, seed, device)
    }

    /// A randomly initialized model of any configuration. The end-of-sequence token is
    /// `config.eos_token_ids`, or else the tokenizer's [`EOS_TOKEN`].
    pub fn from_config(
        mut config: Qwen2Config,
        tokenizer: Tokenizer,
        seed: u64,
        device: &Device,
    ) -> Result<Self, TrainError> {
        config.validate().map_err(|message| TrainError::Config {
            file: CONFIG_FILE.into(),
            message,
        })?;
        if config.eos_token_ids.is_empty() {
            config.eos_token_ids = vec![tok::token_id(&tokenizer, EOS_TOKEN)?];
        }
        let varmap = Qwen2::init_varmap(&config, seed, device)?;
        Self::build(config, tokenizer, varmap, device)
    }

    /// Loads a Hugging Face directory: `config.json`, `tokenizer.json`, and the weights
    /// (`model.safetensors`, or the shards of `model.safetensors.index.json`).
    pub fn from_hf_dir(dir: &Path, device: &Device) -> Result<Self, TrainError> {
        let config_path = dir.join(CONFIG_FILE);
        let mut config = Qwen2Config::from_file(&config_path)?;
        let tokenizer = tok::load(&dir.join(TOKENIZER_FILE))?;
        if config.eos_token_ids.is_empty() {
            let found = EOS_CANDIDATES
                .iter()
                .find_map(|t| tokenizer.token_to_id(t))
                .ok_or_else(|| TrainError::Config {
                    file: config_path.clone(),
                    message: format!(
                        "missing key `eos_token_id`, and the tokenizer has none of {EOS_CANDIDATES:?}"
                    ),
                })?;
            config.eos_token_ids = vec![found];
        }
        let files = checkpoint::weight_files(dir)?;
        let varmap = checkpoint::load_varmap(&config, &files, device)?;
        Self::build(config, tokenizer, varmap, device)
    }

    fn build(
        config: Qwen2Config,
        tokenizer: Tokenizer,
        varmap: VarMap,
        device: &Device,
    ) -> Result<Self, TrainError> {
        let tokens = tokenizer.get_vocab_size(true);
        if tokens > config.vocab_size {
            return Err(TrainError::Config {
                file: CONFIG_FILE.into(),
                message: format!(
                    "key `vocab_size`: {} is smaller than the tokenizer's {tokens} tokens",
                    config.vocab_size
                ),
            });
        }
        let dtype = compute_dtype(device);
        let vb = VarBuilder::from_varmap(&varmap, DType::F32, device);
        let model = Qwen2::new(&config, vb, dtype)?;
        let eos_ids = config.eos_token_ids.clone();
        Ok(Policy {
            model,
            tokenizer,
            varmap,
            device: device.clone(),
            dtype,
            config,
            eos_ids,
        })
    }

    pub fn config(&self) -> &Qwen2Config {
        &self.config
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    pub fn model(&self) -> &Qwen2 {
        &self.model
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The dtype the forward pass computes in (the weights are f32).
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The token ids of `text` (no special tokens added).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, TrainError> {
        let encoding = self
            .tokenizer
            .encode(text, false)
            .map_err(|e| TrainError::Tokenizer(format!("encoding: {e}")))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// The text of `ids`, special tokens (end of sequence, padding) left out.
    pub fn decode(&self, ids: &[u32]) -> Result<String, TrainError> {
        self.tokenizer
            .decode(ids, true)
            .map_err(|e| TrainError::Tokenizer(format!("decoding: {e}")))
    }

    /// The end-of-sequence token appended to training targets.
    pub fn eos_id(&self) -> u32 {
        self.eos_ids[0]
    }

    /// Every token that ends a sample.
    pub fn eos_ids(&self) -> &[u32] {
        &self.eos_ids
    }

    fn check_ids(&self, what: &str, ids: &[u32]) -> Result<(), TrainError> {
        if let Some(id) = ids
            .iter()
            .find(|&&id| id as usize >= self.config.vocab_size)
        {
            return Err(TrainError::Input(format!(
                "{what}: token id {id} is outside the vocabulary of {}",
                self.config.vocab_size
            )));
        }
        Ok(())
    }

    fn check_prompt(&self, prompt: &[u32], extra: usize) -> Result<(), TrainError> {
        if prompt.is_empty() {
            return Err(TrainError::Input("the prompt is empty".to_string()));
        }
        self.check_ids("prompt", prompt)?;
        let max = self.config.max_position_embeddings;
        if prompt.len() + extra > max {
            return Err(TrainError::Input(format!(
                "a prompt of {} tokens and {extra} more exceed the model's {max} positions",
                prompt.len()
            )));
        }
        Ok(())
    }

    /// `n` completions of up to `max_new` tokens after `prompt`, each stopping at an
    /// end-of-sequence token. `temperature` 0 is greedy decoding; otherwise tokens are drawn
    /// from softmax(logits / temperature) with `rng`, so a seeded `rng` reproduces the samples.
    /// The prompt is computed once and the `n` samples advance together on a key/value cache.
    pub fn sample(
        &self,
        prompt: &[u32],
        n: usize,
        max_new: usize,
        temperature: f64,
        rng: &mut StdRng,
    ) -> Result<Vec<Sample>, TrainError> {
        if !(temperature.is_finite() && temperature >= 0.0) {
            return Err(TrainError::Input(format!(
                "temperature {temperature} is not a non-negative number"
            )));
        }
        self.check_prompt(prompt, max_new)?;
        let mut samples = vec![
            Sample {
                tokens: Vec::with_capacity(max_new),
                logprobs: Vec::with_capacity(max_new),
                finished: false,
            };
            n
        ];
        if n == 0 || max_new == 0 {
            return Ok(samples);
        }
        let mut cache = KvCache::new(&self.config);
        let ids = Tensor::new(prompt, &self.device)?.unsqueeze(0)?;
        let hidden = self.model.hidden_states(&ids, Some(&mut cache))?;
        // Only the last position's logits are needed (a long prompt times a large vocabulary
        // would not fit in memory otherwise).
        let last = hidden.narrow(1, prompt.len() - 1, 1)?;
        let first: Vec<f32> = self.model.logits(&last)?.flatten_all()?.to_vec1()?;
        let mut rows: Vec<Vec<f32>> = vec![first; n];
        let mut cache = if n > 1 { cache.repeat_batch(n)? } else { cache };
        for step in 0..max_new {
            let mut next = Vec::with_capacity(n);
            for (sample, row) in samples.iter_mut().zip(&rows) {
                if sample.finished {
                    next.push(self.eos_id());
                    continue;
                }
                let (token, logprob) = pick(row, temperature, rng)?;
                sample.tokens.push(token);
                sample.logprobs.push(logprob);
                sample.finished = self.eos_ids.contains(&token);
                next.push(token);
            }
            if step + 1 == max_new || samples.iter().all(|s| s.finished) {
                break;
            }
            let ids = Tensor::new(next.as_slice(), &self.device)?.unsqueeze(1)?;
            let logits = self.model.forward(&ids, Some(&mut cache))?;
            rows = logits.squeeze(1)?.to_vec2()?;
        }
        Ok(samples)
    }

    /// The log-probability of every token of each completion given `prompt`, differentiable
    /// with respect to the weights: `(logp, mask)`, both `[n, L]` f32 with `n` the number of
    /// completions and `L` the longest one (at least 1); `mask` is 1 on completion tokens and 0
    /// on padding, where `logp` is 0 too.
    pub fn completion_logprobs(
        &self,
        prompt: &[u32],
        completions: &[Vec<u32>],
    ) -> Result<(Tensor, Tensor), TrainError> {
        if completions.is_empty() {
            return Err(TrainError::Input("no completion to score".to_string()));
        }
        let len = completions.iter().map(Vec::len).max().unwrap_or(0).max(1);
        self.check_prompt(prompt, len - 1)?;
        let n = completions.len();
        let pad = self.eos_id();
        let width = prompt.len() + len - 1;
        let mut inputs = Vec::with_capacity(n * width);
        let mut targets = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        for completion in completions {
            self.check_ids("completion", completion)?;
            let padded = completion
                .iter()
                .copied()
                .chain(std::iter::repeat(pad))
                .take(len)
                .collect::<Vec<u32>>();
            inputs.extend_from_slice(prompt);
            inputs.extend_from_slice(&padded[..len - 1]);
            targets.extend_from_slice(&padded);
            mask.extend((0..len).map(|i| if i < completion.len() { 1f32 } else { 0.0 }));
        }
        let inputs = Tensor::from_vec(inputs, (n, width), &self.device)?;
        let targets = Tensor::from_vec(targets, (n, len, 1), &self.device)?;
        let mask = Tensor::from_vec(mask, (n, len), &self.device)?;
        let hidden = self.model.hidden_states(&inputs, None)?;
        let hidden = hidden.narrow(1, prompt.len() - 1, len)?;
        let logp = log_softmax_last_dim(&self.model.logits(&hidden)?)?;
        let logp = logp.gather(&targets, D::Minus1)?.squeeze(D::Minus1)?;
        let logp = (logp * &mask)?;
        Ok((logp, mask))
    }

    /// The mean negative log-likelihood of `target`'s tokens after `prompt` (append
    /// [`Policy::eos_id`] to the target to teach the model to stop).
    pub fn sft_loss(&self, prompt: &[u32], target: &[u32]) -> Result<Tensor, TrainError> {
        if target.is_empty() {
            return Err(TrainError::Input("the target is empty".to_string()));
        }
        let (logp, _mask) = self.completion_logprobs(prompt, &[target.to_vec()])?;
        Ok((logp.sum_all()? * (-1.0 / target.len() as f64))?)
    }

    /// The trainable variables with their Hugging Face names, sorted by name.
    pub fn named_vars(&self) -> Vec<(String, Var)> {
        let data = self
            .varmap
            .data()
            .lock()
            .expect("the variable store is not poisoned");
        let mut vars: Vec<(String, Var)> =
            data.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        vars
    }

    /// The trainable variables (every weight), in name order.
    pub fn trainable_vars(&self) -> Vec<Var> {
        self.named_vars().into_iter().map(|(_, v)| v).collect()
    }

    /// The number of scalar parameters (tied embeddings counted once).
    pub fn num_parameters(&self) -> usize {
        self.named_vars().iter().map(|(_, v)| v.elem_count()).sum()
    }

    /// Writes a Hugging Face directory that [`Policy::from_hf_dir`] (and Hugging Face loaders)
    /// read back: `config.json`, `tokenizer.json`, `model.safetensors` (f32).
    pub fn save_dir(&self, dir: &Path) -> Result<(), TrainError> {
        std::fs::create_dir_all(dir).map_err(|e| TrainError::io(dir, e))?;
        checkpoint::save_config(&self.config, dir)?;
        tok::save(&self.tokenizer, &dir.join(TOKENIZER_FILE))?;
        checkpoint::save_weights(&self.varmap, &dir.join(WEIGHTS_FILE))
    }
}

/// Chooses a token from one row of logits: greedy at temperature 0, else a draw from
/// softmax(logits / temperature). Returns the token and its log-probability at temperature 1.
fn pick(logits: &[f32], temperature: f64, rng: &mut StdRng) -> Result<(u32, f32), TrainError> {
    if logits.iter().any(|l| !l.is_finite()) {
        return Err(TrainError::NonFinite("logits"));
    }
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let log_sum = logits
        .iter()
        .map(|&l| (l as f64 - max).exp())
        .sum::<f64>()
        .ln()
        + max;
    let token = if temperature == 0.0 {
        // The first maximum, for a deterministic tie-break.
        let mut best = 0;
        for (i, &l) in logits.iter().enumerate() {
            if l > logits[best] {
                best = i;
            }
        }
        best
    } else {
        let weights: Vec<f64> = logits
            .iter()
            .map(|&l| ((l as f64 - max) / temperature).exp())
            .collect();
        let total: f64 = weights.iter().sum();
        let mut u = rng.random::<f64>() * total;
        let mut chosen = weights.len() - 1;
        for (i, w) in weights.iter().enumerate() {
            if u < *w {
                chosen = i;
                break;
            }
            u -= w;
        }
        chosen
    };
    Ok((token as u32, (logits[token] as f64 - log_sum) as f32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    // Greedy picks the first maximum; a draw at a tiny temperature picks the maximum too; the
    // log-probability is the temperature-1 log-softmax.
    #[test]
    fn pick_tokens() {
        let mut rng = StdRng::seed_from_u64(0);
        let logits = [0.0f32, 2.0, 2.0, -1.0];
        let (t, lp) = pick(&logits, 0.0, &mut rng).unwrap();
        assert_eq!(t, 1);
        let lse = (1.0f64 + 2.0 * 2f64.exp() + (-1f64).exp()).ln();
        assert!((lp as f64 - (2.0 - lse)).abs() < 1e-6);
        let (t, _) = pick(&[0.0, 5.0, 0.0], 1e-3, &mut rng).unwrap();
        assert_eq!(t, 1);
        assert!(pick(&[0.0, f32::NAN], 1.0, &mut rng).is_err());
    }

    // Draws follow softmax(logits / T): with logits (0, ln 3) at T=1, token 1 comes ~3/4 of
    // the time.
    #[test]
    fn pick_follows_distribution() {
        let mut rng = StdRng::seed_from_u64(42);
        let logits = [0.0f32, 3f32.ln()];
        let ones = (0..4000)
            .filter(|_| pick(&logits, 1.0, &mut rng).unwrap().0 == 1)
            .count();
        assert!((2850..3150).contains(&ones), "{ones}");
    }
}
