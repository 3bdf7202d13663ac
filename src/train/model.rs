//! The Qwen2 causal language model written with differentiable tensor ops only (RMSNorm,
//! rotary embeddings and softmax from basic ops, so every weight receives a gradient), with the
//! Hugging Face weight names so real checkpoints load, and a key/value cache for sampling.

use candle_core::{DType, Device, Tensor, D};
use candle_nn::{VarBuilder, VarMap};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::config::{Qwen2Config, WeightKind};

type Result<T> = candle_core::Result<T>;

/// The standard deviation of freshly initialized matrices (Qwen2's `initializer_range`).
const INIT_STD: f64 = 0.02;

/// A linear layer `y = x Wᵀ (+ b)` over the last dimension.
#[derive(Debug, Clone)]
struct Linear {
    weight: Tensor,
    bias: Option<Tensor>,
}

impl Linear {
    fn load(vb: &VarBuilder, out_dim: usize, in_dim: usize, bias: bool) -> Result<Self> {
        let weight = get(vb, (out_dim, in_dim), "weight")?;
        let bias = if bias {
            Some(get(vb, out_dim, "bias")?)
        } else {
            None
        };
        Ok(Linear { weight, bias })
    }

    fn forward(&self, x: &Tensor, dtype: DType) -> Result<Tensor> {
        let (b, t, d) = x.dims3()?;
        let w = self.weight.to_dtype(dtype)?;
        let y = x.reshape((b * t, d))?.matmul(&w.t()?)?;
        let y = match &self.bias {
            Some(bias) => y.broadcast_add(&bias.to_dtype(dtype)?)?,
            None => y,
        };
        y.reshape((b, t, ()))
    }
}

/// A weight that must already be in the variable store (a missing one is an error, never a
/// silently initialized tensor).
fn get<S: Into<candle_core::Shape>>(vb: &VarBuilder, shape: S, name: &str) -> Result<Tensor> {
    if !vb.contains_tensor(name) {
        candle_core::bail!("missing weight `{}`", vb.pp(name).prefix());
    }
    vb.get(shape, name)
}

/// RMSNorm in f32: `x / sqrt(mean(x²) + eps) * w`, returned in `dtype`.
fn rms_norm(x: &Tensor, weight: &Tensor, eps: f64, dtype: DType) -> Result<Tensor> {
    let x32 = x.to_dtype(DType::F32)?;
    let mean_sq = x32.sqr()?.mean_keepdim(D::Minus1)?;
    let normed = x32.broadcast_div(&(mean_sq + eps)?.sqrt()?)?;
    normed
        .to_dtype(dtype)?
        .broadcast_mul(&weight.to_dtype(dtype)?)
}

/// Softmax over the last dimension from exp and sum (the maximum is subtracted first; it is
/// detached, which leaves the result and its gradient unchanged).
pub fn softmax_last_dim(x: &Tensor) -> Result<Tensor> {
    let max = x.max_keepdim(D::Minus1)?.detach();
    let e = x.broadcast_sub(&max)?.exp()?;
    e.broadcast_div(&e.sum_keepdim(D::Minus1)?)
}

/// Log-softmax over the last dimension, differentiable.
pub fn log_softmax_last_dim(x: &Tensor) -> Result<Tensor> {
    let max = x.max_keepdim(D::Minus1)?.detach();
    let shifted = x.broadcast_sub(&max)?;
    let log_sum = shifted.exp()?.sum_keepdim(D::Minus1)?.log()?;
    shifted.broadcast_sub(&log_sum)
}

/// `[x1, x2] -> [-x2, x1]` over the last dimension.
fn rotate_half(x: &Tensor) -> Result<Tensor> {
    let half = x.dim(D::Minus1)? / 2;
    let x1 = x.narrow(D::Minus1, 0, half)?;
    let x2 = x.narrow(D::Minus1, half, half)?;
    Tensor::cat(&[&x2.neg()?, &x1], D::Minus1)
}

/// The cos and sin tables `[t, head_dim]` of positions `offset..offset + t` (the half-width
/// frequencies repeated twice, as in the Hugging Face implementation; angles in f32 as there).
fn rotary_tables(
    cfg: &Qwen2Config,
    offset: usize,
    t: usize,
    dtype: DType,
    device: &Device,
) -> Result<(Tensor, Tensor)> {
    let dim = cfg.head_dim();
    let inv_freq: Vec<f32> = (0..dim)
        .step_by(2)
        .map(|i| (1.0 / cfg.rope_theta.powf(i as f64 / dim as f64)) as f32)
        .collect();
    let mut cos = Vec::with_capacity(t * dim);
    let mut sin = Vec::with_capacity(t * dim);
    for pos in offset..offset + t {
        for _ in 0..2 {
            for f in &inv_freq {
                let angle = pos as f32 * f;
                cos.push(angle.cos());
                sin.push(angle.sin());
            }
        }
    }
    let cos = Tensor::from_vec(cos, (t, dim), device)?.to_dtype(dtype)?;
    let sin = Tensor::from_vec(sin, (t, dim), device)?.to_dtype(dtype)?;
    Ok((cos, sin))
}

fn apply_rotary(x: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    x.broadcast_mul(cos)? + rotate_half(x)?.broadcast_mul(sin)?
}

/// `[b, kv_heads, s, d] -> [b, kv_heads * groups, s, d]`, each key/value head serving `groups`
/// consecutive query heads.
fn repeat_kv(x: &Tensor, groups: usize) -> Result<Tensor> {
    if groups == 1 {
        return Ok(x.clone());
    }
    let (b, h, s, d) = x.dims4()?;
    x.unsqueeze(2)?
        .broadcast_as((b, h, groups, s, d))?
        .reshape((b, h * groups, s, d))
}

/// The additive causal mask `[t, offset + t]`: 0 where a query may attend, -inf after it.
fn causal_mask(t: usize, offset: usize, device: &Device) -> Result<Tensor> {
    let s = offset + t;
    let mask: Vec<f32> = (0..t)
        .flat_map(|i| {
            (0..s).map(move |j| {
                if j > i + offset {
                    f32::NEG_INFINITY
                } else {
                    0.0
                }
            })
        })
        .collect();
    Tensor::from_vec(mask, (t, s), device)
}

#[derive(Debug, Clone)]
struct Attention {
    q_proj: Linear,
    k_proj: Linear,
    v_proj: Linear,
    o_proj: Linear,
    num_heads: usize,
    num_kv_heads: usize,
    head_dim: usize,
}

impl Attention {
    fn load(cfg: &Qwen2Config, vb: &VarBuilder) -> Result<Self> {
        let h = cfg.hidden_size;
        let kv = cfg.num_key_value_heads * cfg.head_dim();
        Ok(Attention {
            q_proj: Linear::load(&vb.pp("q_proj"), h, h, true)?,
            k_proj: Linear::load(&vb.pp("k_proj"), kv, h, true)?,
            v_proj: Linear::load(&vb.pp("v_proj"), kv, h, true)?,
            o_proj: Linear::load(&vb.pp("o_proj"), h, h, false)?,
            num_heads: cfg.num_attention_heads,
            num_kv_heads: cfg.num_key_value_heads,
            head_dim: cfg.head_dim(),
        })
    }

    fn forward(
        &self,
        x: &Tensor,
        rotary: &(Tensor, Tensor),
        mask: Option<&Tensor>,
        cache: Option<&mut Option<(Tensor, Tensor)>>,
        dtype: DType,
    ) -> Result<Tensor> {
        let (b, t, _) = x.dims3()?;
        let heads = |y: Tensor, n: usize| -> Result<Tensor> {
            y.reshape((b, t, n, self.head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = heads(self.q_proj.forward(x, dtype)?, self.num_heads)?;
        let k = heads(self.k_proj.forward(x, dtype)?, self.num_kv_heads)?;
        let v = heads(self.v_proj.forward(x, dtype)?, self.num_kv_heads)?;
        let (cos, sin) = rotary;
        let q = apply_rotary(&q, cos, sin)?;
        let k = apply_rotary(&k, cos, sin)?;
        let (k, v) = match cache {
            None => (k, v),
            Some(slot) => {
                let (k, v) = match slot.take() {
                    None => (k, v),
                    Some((pk, pv)) => (Tensor::cat(&[&pk, &k], 2)?, Tensor::cat(&[&pv, &v], 2)?),
                };
                // The cache serves sampling only: no gradient flows through it.
                *slot = Some((k.detach(), v.detach()));
                (k, v)
            }
        };
        let groups = self.num_heads / self.num_kv_heads;
        let k = repeat_kv(&k, groups)?.contiguous()?;
        let v = repeat_kv(&v, groups)?.contiguous()?;
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        let scores = (q.matmul(&k.t()?)? * scale)?.to_dtype(DType::F32)?;
        let scores = match mask {
            Some(mask) => scores.broadcast_add(mask)?,
            None => scores,
        };
        let probs = softmax_last_dim(&scores)?.to_dtype(dtype)?;
        let out = probs.matmul(&v)?.transpose(1, 2)?.reshape((b, t, ()))?;
        self.o_proj.forward(&out, dtype)
    }
}

#[derive(Debug, Clone)]
struct Mlp {
    gate_proj: Linear,
    up_proj: Linear,
    down_proj: Linear,
}

impl Mlp {
    fn load(cfg: &Qwen2Config, vb: &VarBuilder) -> Result<Self> {
        let (h, i) = (cfg.hidden_size, cfg.intermediate_size);
        Ok(Mlp {
            gate_proj: Linear::load(&vb.pp("gate_proj"), i, h, false)?,
            up_proj: Linear::load(&vb.pp("up_proj"), i, h, false)?,
            down_proj: Linear::load(&vb.pp("down_proj"), h, i, false)?,
        })
    }

    fn forward(&self, x: &Tensor, dtype: DType) -> Result<Tensor> {
        let gate = self.gate_proj.forward(x, dtype)?.silu()?;
        let up = self.up_proj.forward(x, dtype)?;
        self.down_proj.forward(&(gate * up)?, dtype)
    }
}

#[derive(Debug, Clone)]
struct Layer {
    input_layernorm: Tensor,
    self_attn: Attention,
    post_attention_layernorm: Tensor,
    mlp: Mlp,
}

/// The key/value cache of a sampling run: per layer, the keys and values `[b, kv_heads, s, d]`
/// of the positions seen so far (detached; used without gradients).
#[derive(Debug, Clone)]
pub struct KvCache {
    layers: Vec<Option<(Tensor, Tensor)>>,
    len: usize,
}

impl KvCache {
    /// An empty cache for `cfg`'s layers.
    pub fn new(cfg: &Qwen2Config) -> Self {
        KvCache {
            layers: vec![None; cfg.num_hidden_layers],
            len: 0,
        }
    }

    /// The number of positions cached.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is cached yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The cache with each batch row repeated `n` times (a prompt computed once, sampled `n`
    /// times).
    pub fn repeat_batch(&self, n: usize) -> Result<KvCache> {
        let layers = self
            .layers
            .iter()
            .map(|slot| {
                slot.as_ref()
                    .map(|(k, v)| Ok((k.repeat((n, 1, 1, 1))?, v.repeat((n, 1, 1, 1))?)))
                    .transpose()
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(KvCache {
            layers,
            len: self.len,
        })
    }
}

/// A Qwen2 causal language model whose weights are the variables of a `VarMap` (updated in
/// place by the optimizer).
#[derive(Debug, Clone)]
pub struct Qwen2 {
    cfg: Qwen2Config,
    dtype: DType,
    device: Device,
    embed_tokens: Tensor,
    layers: Vec<Layer>,
    norm: Tensor,
    lm_head: Tensor,
}

impl Qwen2 {
    /// Builds the model over the weights in `vb` (Hugging Face names). `dtype` is the dtype the
    /// forward pass computes in; the weights keep theirs and are cast as they are used.
    pub fn new(cfg: &Qwen2Config, vb: VarBuilder, dtype: DType) -> Result<Self> {
        let vm = vb.pp("model");
        let h = cfg.hidden_size;
        let embed_tokens = get(&vm.pp("embed_tokens"), (cfg.vocab_size, h), "weight")?;
        let layers = (0..cfg.num_hidden_layers)
            .map(|i| {
                let vl = vm.pp("layers").pp(i);
                Ok(Layer {
                    input_layernorm: get(&vl.pp("input_layernorm"), h, "weight")?,
                    self_attn: Attention::load(cfg, &vl.pp("self_attn"))?,
                    post_attention_layernorm: get(&vl.pp("post_attention_layernorm"), h, "weight")?,
                    mlp: Mlp::load(cfg, &vl.pp("mlp"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let norm = get(&vm.pp("norm"), h, "weight")?;
        let lm_head = if cfg.tie_word_embeddings {
            embed_tokens.clone()
        } else {
            get(&vb.pp("lm_head"), (cfg.vocab_size, h), "weight")?
        };
        Ok(Qwen2 {
            cfg: cfg.clone(),
            dtype,
            device: vb.device().clone(),
            embed_tokens,
            layers,
            norm,
            lm_head,
        })
    }

    /// A `VarMap` holding every weight of `cfg` freshly initialized from `seed` (matrices
    /// uniform with standard deviation 0.02, biases 0, norm scales 1), as f32 on `device`.
    pub fn init_varmap(cfg: &Qwen2Config, seed: u64, device: &Device) -> Result<VarMap> {
        let mut rng = StdRng::seed_from_u64(seed);
        let bound = (INIT_STD * 3f64.sqrt()) as f32;
        let varmap = VarMap::new();
        {
            let mut data = varmap
                .data()
                .lock()
                .expect("a fresh VarMap lock is not poisoned");
            for spec in cfg.weight_specs() {
                let n: usize = spec.shape.iter().product();
                let values: Vec<f32> = match spec.kind {
                    WeightKind::Matrix => (0..n).map(|_| rng.random_range(-bound..bound)).collect(),
                    WeightKind::Bias => vec![0.0; n],
                    WeightKind::Norm => vec![1.0; n],
                };
                let var = candle_core::Var::from_vec(values, spec.shape.as_slice(), device)?;
                data.insert(spec.name, var);
            }
        }
        Ok(varmap)
    }

    pub fn config(&self) -> &Qwen2Config {
        &self.cfg
    }

    /// The dtype the forward pass computes in.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The final-normed hidden states `[b, t, hidden]` of token ids `[b, t]`. With a cache,
    /// the ids continue the cached positions and the cache is extended.
    pub fn hidden_states(&self, ids: &Tensor, mut cache: Option<&mut KvCache>) -> Result<Tensor> {
        let (b, t) = ids.dims2()?;
        let offset = cache.as_ref().map_or(0, |c| c.len);
        let rotary = rotary_tables(&self.cfg, offset, t, self.dtype, &self.device)?;
        let mask = if t > 1 {
            Some(causal_mask(t, offset, &self.device)?)
        } else {
            None
        };
        let embed = self.embed_tokens.to_dtype(self.dtype)?;
        let mut x =
            embed
                .index_select(&ids.flatten_all()?, 0)?
                .reshape((b, t, self.cfg.hidden_size))?;
        let eps = self.cfg.rms_norm_eps;
        for (i, layer) in self.layers.iter().enumerate() {
            let slot = cache.as_mut().map(|c| &mut c.layers[i]);
            let normed = rms_norm(&x, &layer.input_layernorm, eps, self.dtype)?;
            let attn =
                layer
                    .self_attn
                    .forward(&normed, &rotary, mask.as_ref(), slot, self.dtype)?;
            x = (x + attn)?;
            let normed = rms_norm(&x, &layer.post_attention_layernorm, eps, self.dtype)?;
            x = (&x + layer.mlp.forward(&normed, self.dtype)?)?;
        }
        if let Some(cache) = cache {
            cache.len += t;
        }
        rms_norm(&x, &self.norm, eps, self.dtype)
    }

    /// The logits `[.., vocab]` (f32) of hidden states `[.., hidden]`.
    pub fn logits(&self, hidden: &Tensor) -> Result<Tensor> {
        let head = self.lm_head.to_dtype(self.dtype)?;
        let dims = hidden.dims().to_vec();
        let (lead, h) = dims.split_at(dims.len() - 1);
        let rows: usize = lead.iter().product();
        let logits = hidden.reshape((rows, h[0]))?.matmul(&head.t()?)?;
        let mut shape = lead.to_vec();
        shape.push(self.cfg.vocab_size);
        logits.reshape(shape)?.to_dtype(DType::F32)
    }

    /// The logits `[b, t, vocab]` (f32) of token ids `[b, t]`.
    pub fn forward(&self, ids: &Tensor, cache: Option<&mut KvCache>) -> Result<Tensor> {
        self.logits(&self.hidden_states(ids, cache)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_transformers::models::qwen2 as reference;

    fn tiny_config(tie: bool) -> Qwen2Config {
        Qwen2Config {
            vocab_size: 97,
            hidden_size: 64,
            intermediate_size: 160,
            num_hidden_layers: 2,
            num_attention_heads: 4,
            num_key_value_heads: 2,
            max_position_embeddings: 256,
            rope_theta: 10_000.0,
            rms_norm_eps: 1e-6,
            tie_word_embeddings: tie,
            hidden_act: "silu".into(),
            eos_token_ids: vec![],
        }
    }

    fn reference_config(cfg: &Qwen2Config) -> reference::Config {
        reference::Config {
            vocab_size: cfg.vocab_size,
            hidden_size: cfg.hidden_size,
            intermediate_size: cfg.intermediate_size,
            num_hidden_layers: cfg.num_hidden_layers,
            num_attention_heads: cfg.num_attention_heads,
            num_key_value_heads: cfg.num_key_value_heads,
            max_position_embeddings: cfg.max_position_embeddings,
            sliding_window: cfg.max_position_embeddings,
            max_window_layers: cfg.num_hidden_layers,
            tie_word_embeddings: cfg.tie_word_embeddings,
            rope_theta: cfg.rope_theta,
            rms_norm_eps: cfg.rms_norm_eps,
            use_sliding_window: false,
            hidden_act: candle_nn::Activation::Silu,
        }
    }

    /// A VarMap whose biases and norm scales are random too, so that a wrong name or a
    /// misplaced bias shows up in the outputs.
    fn random_varmap(cfg: &Qwen2Config, seed: u64) -> VarMap {
        let dev = Device::Cpu;
        let varmap = Qwen2::init_varmap(cfg, seed, &dev).unwrap();
        let mut rng = StdRng::seed_from_u64(seed + 1);
        for spec in cfg.weight_specs() {
            let n: usize = spec.shape.iter().product();
            let values: Vec<f32> = match spec.kind {
                WeightKind::Matrix => (0..n).map(|_| rng.random_range(-0.15..0.15)).collect(),
                WeightKind::Bias => (0..n).map(|_| rng.random_range(-0.1..0.1)).collect(),
                WeightKind::Norm => (0..n).map(|_| rng.random_range(0.5..1.5)).collect(),
            };
            let t = Tensor::from_vec(values, spec.shape.as_slice(), &dev).unwrap();
            varmap.data().lock().unwrap()[&spec.name].set(&t).unwrap();
        }
        varmap
    }

    fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
        (a - b)
            .unwrap()
            .abs()
            .unwrap()
            .flatten_all()
            .unwrap()
            .max(0)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap()
    }

    // Same weights, same ids: our hidden states and logits match candle-transformers' Qwen2
    // (tied and untied head), which proves the structure and the weight names.
    #[test]
    fn matches_candle_transformers_qwen2() {
        for tie in [true, false] {
            let cfg = tiny_config(tie);
            let varmap = random_varmap(&cfg, 7);
            let dev = Device::Cpu;
            let vb = VarBuilder::from_varmap(&varmap, DType::F32, &dev);
            let ours = Qwen2::new(&cfg, vb.clone(), DType::F32).unwrap();
            let ids: Vec<u32> = (0..23u32).map(|i| (i * 37 + 5) % 97).collect();
            let ids = Tensor::new(ids.as_slice(), &dev)
                .unwrap()
                .unsqueeze(0)
                .unwrap();

            let rcfg = reference_config(&cfg);
            let mut base = reference::Model::new(&rcfg, vb.clone()).unwrap();
            let want_hidden = base.forward(&ids, 0, None).unwrap();
            let got_hidden = ours.hidden_states(&ids, None).unwrap();
            let d = max_abs_diff(&got_hidden, &want_hidden);
            assert!(d < 1e-4, "hidden states differ by {d} (tie={tie})");

            let mut lm = reference::ModelForCausalLM::new(&rcfg, vb).unwrap();
            let want = lm.forward(&ids, 0).unwrap(); // [1, 1, vocab]: the last position
            let got = ours.forward(&ids, None).unwrap().narrow(1, 22, 1).unwrap();
            let scale = want.abs().unwrap().flatten_all().unwrap().max(0).unwrap();
            assert!(
                scale.to_scalar::<f32>().unwrap() > 0.1,
                "logits are not trivial"
            );
            let d = max_abs_diff(&got, &want);
            assert!(d < 1e-4, "logits differ by {d} (tie={tie})");
        }
    }

    // The bf16 compute path (what CUDA uses) stays within bf16 precision of f32, and the f32
    // weights still all receive gradients through the casts.
    #[test]
    fn bf16_compute_close_to_f32_with_gradients() {
        let cfg = tiny_config(true);
        let varmap = Qwen2::init_varmap(&cfg, 9, &Device::Cpu).unwrap();
        let dev = Device::Cpu;
        let vb = VarBuilder::from_varmap(&varmap, DType::F32, &dev);
        let f32_model = Qwen2::new(&cfg, vb.clone(), DType::F32).unwrap();
        let bf16_model = Qwen2::new(&cfg, vb, DType::BF16).unwrap();
        let ids: Vec<u32> = (0..10u32).map(|i| (i * 13 + 1) % 97).collect();
        let ids = Tensor::new(ids.as_slice(), &dev)
            .unwrap()
            .unsqueeze(0)
            .unwrap();
        let a = f32_model.forward(&ids, None).unwrap();
        let b = bf16_model.forward(&ids, None).unwrap();
        assert_eq!(b.dtype(), DType::F32, "logits come back as f32");
        let d = max_abs_diff(&a, &b);
        let scale = a
            .abs()
            .unwrap()
            .flatten_all()
            .unwrap()
            .max(0)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        assert!(
            d < 0.05 * scale.max(1e-3),
            "bf16 differs by {d} (scale {scale})"
        );
        let loss = b.sqr().unwrap().mean_all().unwrap();
        let grads = loss.backward().unwrap();
        for var in varmap.all_vars() {
            let g = grads
                .get(var.as_tensor())
                .expect("a gradient for every weight");
            assert_eq!(g.dtype(), DType::F32);
            let mass: f32 = g.abs().unwrap().sum_all().unwrap().to_scalar().unwrap();
            assert!(mass > 0.0);
        }
    }

    // Decoding one token at a time through the cache gives the full forward's logits.
    #[test]
    fn cached_decoding_matches_full_forward() {
        let cfg = tiny_config(true);
        let varmap = random_varmap(&cfg, 3);
        let dev = Device::Cpu;
        let model = Qwen2::new(
            &cfg,
            VarBuilder::from_varmap(&varmap, DType::F32, &dev),
            DType::F32,
        )
        .unwrap();
        let ids: Vec<u32> = (0..12u32).map(|i| (i * 11 + 2) % 97).collect();
        let full = model
            .forward(
                &Tensor::new(ids.as_slice(), &dev)
                    .unwrap()
                    .unsqueeze(0)
                    .unwrap(),
                None,
            )
            .unwrap();
        let mut cache = KvCache::new(&cfg);
        let prefix = Tensor::new(&ids[..5], &dev).unwrap().unsqueeze(0).unwrap();
        let mut steps = vec![model.forward(&prefix, Some(&mut cache)).unwrap()];
        for &id in &ids[5..] {
            let one = Tensor::new(&[id], &dev).unwrap().unsqueeze(0).unwrap();
            steps.push(model.forward(&one, Some(&mut cache)).unwrap());
        }
        assert_eq!(cache.len(), 12);
        let stepped = Tensor::cat(&steps, 1).unwrap();
        let d = max_abs_diff(&stepped, &full);
        assert!(d < 1e-4, "cached decoding differs by {d}");
    }

    // Softmax and log-softmax from basic ops agree with candle-nn's fused versions.
    #[test]
    fn softmax_matches_candle_nn() {
        let x = Tensor::new(
            &[
                [1.0f32, -2.0, 30.0, 0.5],
                [0.0, 0.0, 0.0, f32::NEG_INFINITY],
            ],
            &Device::Cpu,
        )
        .unwrap();
        let d = max_abs_diff(
            &softmax_last_dim(&x).unwrap(),
            &candle_nn::ops::softmax_last_dim(&x).unwrap(),
        );
        assert!(d < 1e-6, "{d}");
        let y = x.narrow(0, 0, 1).unwrap();
        let d = max_abs_diff(
            &log_softmax_last_dim(&y).unwrap(),
            &candle_nn::ops::log_softmax(&y, D::Minus1).unwrap(),
        );
        assert!(d < 1e-5, "{d}");
    }

    // Two models built from the same seed have identical weights; another seed differs.
    #[test]
    fn init_is_seeded() {
        let cfg = tiny_config(true);
        let get = |seed| {
            let vm = Qwen2::init_varmap(&cfg, seed, &Device::Cpu).unwrap();
            let t = vm.data().lock().unwrap()["model.layers.1.mlp.up_proj.weight"]
                .as_tensor()
                .clone();
            t
        };
        assert_eq!(max_abs_diff(&get(1), &get(1)), 0.0);
        assert!(max_abs_diff(&get(1), &get(2)) > 0.0);
    }
}
