//! GRPO: groups of sampled edits per task, advantages within the group, and the clipped
//! token-level policy loss (no KL term).

use super::policy::Policy;
use super::TrainError;
use candle_core::{DType, Tensor};

/// The knobs of one GRPO update.
#[derive(Clone, Debug)]
pub struct GrpoConfig {
    /// Lower clip of the probability ratio (1 − ε_low).
    pub clip_low: f64,
    /// Upper clip of the probability ratio (1 + ε_high; higher than the lower one so rare
    /// good tokens can gain, as in DAPO).
    pub clip_high: f64,
    /// Weight β of the KL penalty to a frozen reference policy (0: none, the default). The
    /// per-token estimate is exp(q − p) − (q − p) − 1 with p, q the current and reference
    /// log-probs (non-negative, unbiased).
    pub kl_coef: f64,
}

impl Default for GrpoConfig {
    fn default() -> Self {
        GrpoConfig {
            clip_low: 0.2,
            clip_high: 0.28,
            kl_coef: 0.0,
        }
    }
}

/// One sampled completion and its verified reward.
#[derive(Clone, Debug)]
pub struct Rollout {
    pub tokens: Vec<u32>,
    pub reward: f32,
}

/// The G rollouts of one task, sampled from the same prompt.
#[derive(Clone, Debug)]
pub struct Group {
    pub task: usize,
    pub prompt: Vec<u32>,
    pub rollouts: Vec<Rollout>,
}

impl Group {
    pub fn rewards(&self) -> Vec<f32> {
        self.rollouts.iter().map(|r| r.reward).collect()
    }

    /// Whether the group can teach anything: its rewards are not all equal (otherwise every
    /// advantage is zero).
    pub fn has_signal(&self) -> bool {
        has_signal(&self.rewards())
    }
}

/// r − mean(r) within a group (no division by the standard deviation).
pub fn advantages(rewards: &[f32]) -> Vec<f32> {
    if rewards.is_empty() {
        return Vec::new();
    }
    let mean = rewards.iter().sum::<f32>() / rewards.len() as f32;
    rewards.iter().map(|r| r - mean).collect()
}

pub fn has_signal(rewards: &[f32]) -> bool {
    rewards.windows(2).any(|w| (w[0] - w[1]).abs() > 1e-6)
}

/// Figures of one loss evaluation.
#[derive(Clone, Debug, Default)]
pub struct LossStats {
    /// Completion tokens the loss averages over.
    pub tokens: usize,
    /// Fraction of those tokens whose ratio was clipped.
    pub clipped: f32,
    /// Mean per-token KL estimate to the reference (when one is given).
    pub kl: Option<f32>,
}

/// The GRPO loss over `groups`: −mean over every completion token of
/// min(ρ·A, clip(ρ, 1−ε_low, 1+ε_high)·A), with ρ the ratio of the current to the old
/// probability of the token and A its completion's advantage. `old` holds, per group, the
/// log-probs the rollouts were scored with before this update ([n, L] like
/// [`Policy::completion_logprobs`]); `None` uses the current ones, detached (a single update
/// per batch, where ρ = 1 and the gradient is A·∇log p). `reference` holds the reference
/// policy's log-probs in the same layout; with `cfg.kl_coef` > 0 the loss adds β times the
/// mean per-token KL estimate to it.
pub fn loss(
    policy: &Policy,
    groups: &[Group],
    old: Option<&[Tensor]>,
    reference: Option<&[Tensor]>,
    cfg: &GrpoConfig,
) -> Result<(Tensor, LossStats), TrainError> {
    let mut total: Option<Tensor> = None;
    let mut kl_total: Option<Tensor> = None;
    let mut tokens = 0usize;
    let mut clipped = 0f32;
    for (gi, g) in groups.iter().enumerate() {
        let completions: Vec<Vec<u32>> = g.rollouts.iter().map(|r| r.tokens.clone()).collect();
        if completions.iter().all(|c| c.is_empty()) {
            continue;
        }
        let (logp, mask) = policy.completion_logprobs(&g.prompt, &completions)?;
        let logp = logp.to_dtype(DType::F32)?;
        let mask = mask.to_dtype(DType::F32)?;
        let old_logp = match old {
            Some(o) => o[gi].clone(),
            None => logp.detach(),
        };
        let adv: Vec<f32> = advantages(&g.rewards());
        let n = adv.len();
        let adv = Tensor::from_vec(adv, (n, 1), logp.device())?;
        let ratio = (&logp - &old_logp)?.exp()?;
        let unclipped = ratio.broadcast_mul(&adv)?;
        let bounded = ratio.clamp(1.0 - cfg.clip_low, 1.0 + cfg.clip_high)?;
        let clipped_obj = bounded.broadcast_mul(&adv)?;
        let obj = unclipped.minimum(&clipped_obj)?;
        let masked = (obj * &mask)?.sum_all()?;
        let count = mask.sum_all()?.to_scalar::<f32>()? as usize;
        tokens += count;
        let was_clipped = ratio
            .ne(&bounded)?
            .to_dtype(DType::F32)?
            .mul(&mask)?
            .sum_all()?
            .to_scalar::<f32>()?;
        clipped += was_clipped;
        total = Some(match total {
            None => masked,
            Some(t) => (t + masked)?,
        });
        if let (Some(r), true) = (reference, cfg.kl_coef > 0.0) {
            let diff = (&r[gi] - &logp)?;
            let k3 = ((diff.exp()? - &diff)? - 1.0)?;
            let k3 = (k3 * &mask)?.sum_all()?;
            kl_total = Some(match kl_total {
                None => k3,
                Some(t) => (t + k3)?,
            });
        }
    }
    let Some(total) = total else {
        return Err(TrainError::Input("no completion tokens to train on".into()));
    };
    let n = tokens.max(1) as f64;
    let mut loss = (total.neg()? / n)?;
    let mut kl = None;
    if let Some(k) = kl_total {
        let k = (k / n)?;
        kl = Some(k.to_scalar::<f32>()?);
        loss = (loss + (k * cfg.kl_coef)?)?;
    }
    Ok((
        loss,
        LossStats {
            tokens,
            clipped: clipped / tokens.max(1) as f32,
            kl,
        },
    ))
}

/// Log-probs of the groups' completions under `policy`, detached: the old ones for several
/// updates on the same batch (the current policy), or the reference's.
pub fn old_logprobs(policy: &Policy, groups: &[Group]) -> Result<Vec<Tensor>, TrainError> {
    groups
        .iter()
        .map(|g| {
            let completions: Vec<Vec<u32>> = g.rollouts.iter().map(|r| r.tokens.clone()).collect();
            let (logp, _) = policy.completion_logprobs(&g.prompt, &completions)?;
            Ok(logp.to_dtype(DType::F32)?.detach())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advantages_are_centred_within_the_group() {
        let a = advantages(&[1.0, 0.0, 0.0, -1.0]);
        assert_eq!(a, vec![1.0, 0.0, 0.0, -1.0]);
        let a = advantages(&[1.0, 1.0, 0.0, 0.0]);
        assert_eq!(a, vec![0.5, 0.5, -0.5, -0.5]);
        assert!((a.iter().sum::<f32>()).abs() < 1e-6);
    }

    /// A small policy and one group: "return a + b" rewarded 1, "return a - b" rewarded −1,
    /// both after the prompt "fix the bug in total()".
    fn rewarded_pair() -> (Policy, Group) {
        use crate::train::tokenizer;
        let corpus = ["fix the bug in total()", "return a + b", "return a - b"];
        let tok = tokenizer::train_bpe(corpus.iter(), 300).unwrap();
        let policy = Policy::small(7, tok, &candle_core::Device::Cpu).unwrap();
        let rollout = |text: &str, reward: f32| Rollout {
            tokens: policy.encode(text).unwrap(),
            reward,
        };
        let group = Group {
            task: 0,
            prompt: policy.encode("fix the bug in total()").unwrap(),
            rollouts: vec![rollout("return a + b", 1.0), rollout("return a - b", -1.0)],
        };
        (policy, group)
    }

    /// The loss pushes probability towards the rewarded completion and away from the other.
    #[test]
    fn a_grpo_step_favours_the_rewarded_completion() {
        use crate::train::{Optimizer, OptimizerConfig};
        let (policy, group) = rewarded_pair();
        let (prompt, good, bad) = (
            group.prompt.clone(),
            group.rollouts[0].tokens.clone(),
            group.rollouts[1].tokens.clone(),
        );
        let logp = |c: &Vec<u32>| -> f32 {
            let (l, _) = policy
                .completion_logprobs(&prompt, std::slice::from_ref(c))
                .unwrap();
            l.sum_all().unwrap().to_scalar::<f32>().unwrap()
        };
        let (good0, bad0) = (logp(&good), logp(&bad));
        let mut opt = Optimizer::new(
            policy.trainable_vars(),
            &OptimizerConfig {
                lr: 1e-3,
                ..OptimizerConfig::default()
            },
        )
        .unwrap();
        for _ in 0..5 {
            let (loss, stats) = loss(
                &policy,
                std::slice::from_ref(&group),
                None,
                None,
                &GrpoConfig::default(),
            )
            .unwrap();
            assert_eq!(stats.tokens, good.len() + bad.len());
            opt.step(&loss).unwrap();
        }
        let (good1, bad1) = (logp(&good), logp(&bad));
        assert!(good1 > good0, "log p(good) {good0} -> {good1}");
        assert!(bad1 < bad0, "log p(bad) {bad0} -> {bad1}");
    }

    /// The KL estimate is 0 at the reference, positive once the policy has moved, and the
    /// penalty slows the move: with a large β the rewarded completion gains less.
    #[test]
    fn the_kl_term_holds_the_policy_near_the_reference() {
        use crate::train::{Optimizer, OptimizerConfig};
        let gain = |beta: f64| -> (f32, f32) {
            let (policy, group) = rewarded_pair();
            let (prompt, good) = (group.prompt.clone(), group.rollouts[0].tokens.clone());
            let groups = std::slice::from_ref(&group);
            let reference = old_logprobs(&policy, groups).unwrap();
            let cfg = GrpoConfig {
                kl_coef: beta,
                ..GrpoConfig::default()
            };
            let logp = |c: &Vec<u32>| -> f32 {
                let (l, _) = policy
                    .completion_logprobs(&prompt, std::slice::from_ref(c))
                    .unwrap();
                l.sum_all().unwrap().to_scalar::<f32>().unwrap()
            };
            let before = logp(&good);
            let (_, first) = loss(&policy, groups, None, Some(&reference), &cfg).unwrap();
            assert!(first.kl.unwrap().abs() < 1e-6, "{:?}", first.kl);
            let mut opt = Optimizer::new(
                policy.trainable_vars(),
                &OptimizerConfig {
                    lr: 3e-3,
                    ..OptimizerConfig::default()
                },
            )
            .unwrap();
            for _ in 0..8 {
                let (l, _) = loss(&policy, groups, None, Some(&reference), &cfg).unwrap();
                opt.step(&l).unwrap();
            }
            let (_, last) = loss(&policy, groups, None, Some(&reference), &cfg).unwrap();
            (logp(&good) - before, last.kl.unwrap())
        };
        let (free_gain, free_kl) = gain(1e-9);
        let (held_gain, held_kl) = gain(50.0);
        assert!(free_kl > 0.0, "the policy moved: KL {free_kl}");
        assert!(free_gain > 0.0, "{free_gain}");
        assert!(held_kl < free_kl, "KL with β=50 {held_kl} vs β≈0 {free_kl}");
        assert!(
            held_gain < free_gain,
            "gain with β=50 {held_gain} vs β≈0 {free_gain}"
        );
    }

    #[test]
    fn equal_rewards_carry_no_signal() {
        assert!(!has_signal(&[1.0, 1.0, 1.0]));
        assert!(!has_signal(&[-1.0; 4]));
        assert!(has_signal(&[-1.0, 0.0, -1.0]));
        assert!(!has_signal(&[]));
    }
}
