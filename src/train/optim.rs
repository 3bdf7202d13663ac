//! The optimizer: candle-nn's AdamW behind global gradient-norm clipping, with a step count.
//!
//! The AdamW moments are private to candle-nn, so they are not saved: resuming a run restores
//! the weights (a checkpoint directory) and the step count, and the moments start again at 0.

use candle_core::backprop::GradStore;
use candle_core::{Tensor, Var};
use candle_nn::optim::{AdamW, Optimizer as _, ParamsAdamW};

use super::TrainError;

/// Optimizer settings.
#[derive(Debug, Clone, PartialEq)]
pub struct OptimizerConfig {
    pub lr: f64,
    pub weight_decay: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    /// Gradients whose global L2 norm exceeds this are scaled down to it; `None`: no clipping.
    pub max_grad_norm: Option<f64>,
}

impl Default for OptimizerConfig {
    fn default() -> Self {
        OptimizerConfig {
            lr: 1e-4,
            weight_decay: 0.0,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            max_grad_norm: Some(1.0),
        }
    }
}

/// What one step did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepStats {
    /// The global L2 norm of the gradients before clipping.
    pub grad_norm: f32,
    /// Whether the gradients were scaled down.
    pub clipped: bool,
    /// The number of steps taken so far, this one included.
    pub step: usize,
}

/// AdamW over a fixed set of variables, with gradient clipping.
pub struct Optimizer {
    inner: AdamW,
    vars: Vec<Var>,
    max_grad_norm: Option<f64>,
    steps: usize,
}

impl Optimizer {
    pub fn new(vars: Vec<Var>, config: &OptimizerConfig) -> Result<Self, TrainError> {
        if !(config.lr.is_finite() && config.lr >= 0.0) {
            return Err(TrainError::Input(format!(
                "learning rate {} is not a non-negative number",
                config.lr
            )));
        }
        let params = ParamsAdamW {
            lr: config.lr,
            beta1: config.beta1,
            beta2: config.beta2,
            eps: config.eps,
            weight_decay: config.weight_decay,
        };
        Ok(Optimizer {
            inner: AdamW::new(vars.clone(), params)?,
            vars,
            max_grad_norm: config.max_grad_norm,
            steps: 0,
        })
    }

    /// Back-propagates `loss` (a scalar) and takes one clipped step. A non-finite loss or
    /// gradient norm is an error and leaves the weights unchanged.
    pub fn step(&mut self, loss: &Tensor) -> Result<StepStats, TrainError> {
        let value = loss.to_dtype(candle_core::DType::F32)?.to_scalar::<f32>()?;
        if !value.is_finite() {
            return Err(TrainError::NonFinite("loss"));
        }
        let grads = loss.backward()?;
        self.step_grads(grads)
    }

    /// Takes one clipped step with gradients computed by the caller (e.g. accumulated).
    pub fn step_grads(&mut self, mut grads: GradStore) -> Result<StepStats, TrainError> {
        let norm = global_grad_norm(&self.vars, &grads)?;
        if !norm.is_finite() {
            return Err(TrainError::NonFinite("gradient norm"));
        }
        let mut clipped = false;
        if let Some(max) = self.max_grad_norm {
            if f64::from(norm) > max && norm > 0.0 {
                let scale = max / f64::from(norm);
                for var in &self.vars {
                    if let Some(g) = grads.remove(var.as_tensor()) {
                        grads.insert(var.as_tensor(), (g * scale)?);
                    }
                }
                clipped = true;
            }
        }
        self.inner.step(&grads)?;
        self.steps += 1;
        Ok(StepStats {
            grad_norm: norm,
            clipped,
            step: self.steps,
        })
    }

    pub fn learning_rate(&self) -> f64 {
        self.inner.learning_rate()
    }

    pub fn set_learning_rate(&mut self, lr: f64) {
        self.inner.set_learning_rate(lr)
    }

    /// The number of steps taken (set by [`Optimizer::set_steps`] on resume).
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Sets the step count when a run resumes from a checkpoint.
    pub fn set_steps(&mut self, steps: usize) {
        self.steps = steps;
    }
}

/// The L2 norm of all the gradients of `vars` taken together (f32; vars without a gradient
/// count as zero).
pub fn global_grad_norm(vars: &[Var], grads: &GradStore) -> Result<f32, TrainError> {
    let mut sum = 0f64;
    for var in vars {
        if let Some(g) = grads.get(var.as_tensor()) {
            let sq = g
                .to_dtype(candle_core::DType::F32)?
                .sqr()?
                .sum_all()?
                .to_scalar::<f32>()?;
            sum += f64::from(sq);
        }
    }
    Ok(sum.sqrt() as f32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    fn quadratic(x: &Var, target: &Tensor) -> Tensor {
        (x.as_tensor() - target)
            .unwrap()
            .sqr()
            .unwrap()
            .sum_all()
            .unwrap()
    }

    // The gradient norm is measured before clipping, and a clipped step moves each weight by
    // at most lr (AdamW's first step is lr * sign(g)).
    #[test]
    fn clips_and_reports_norm() {
        let dev = Device::Cpu;
        let x = Var::from_vec(vec![0f32, 0.0], 2, &dev).unwrap();
        let target = Tensor::new(&[3f32, 4.0], &dev).unwrap();
        let config = OptimizerConfig {
            lr: 0.1,
            max_grad_norm: Some(1.0),
            ..OptimizerConfig::default()
        };
        let mut opt = Optimizer::new(vec![x.clone()], &config).unwrap();
        let stats = opt.step(&quadratic(&x, &target)).unwrap();
        // d/dx (x - t)^2 = 2 (x - t) = (-6, -8): norm 10.
        assert!((stats.grad_norm - 10.0).abs() < 1e-4, "{stats:?}");
        assert!(stats.clipped);
        assert_eq!(stats.step, 1);
        let moved = x.as_tensor().to_vec1::<f32>().unwrap();
        for m in moved {
            assert!((m - 0.1).abs() < 1e-4, "{m}");
        }
    }

    // Repeated steps drive a quadratic loss down; a NaN loss is refused without a step.
    #[test]
    fn descends_and_refuses_nan() {
        let dev = Device::Cpu;
        let x = Var::from_vec(vec![0f32, 0.0], 2, &dev).unwrap();
        let target = Tensor::new(&[1f32, -1.0], &dev).unwrap();
        let config = OptimizerConfig {
            lr: 0.05,
            ..OptimizerConfig::default()
        };
        let mut opt = Optimizer::new(vec![x.clone()], &config).unwrap();
        let first = quadratic(&x, &target).to_scalar::<f32>().unwrap();
        for _ in 0..50 {
            opt.step(&quadratic(&x, &target)).unwrap();
        }
        let last = quadratic(&x, &target).to_scalar::<f32>().unwrap();
        assert!(last < first * 0.1, "{first} -> {last}");
        let before = x.as_tensor().to_vec1::<f32>().unwrap();
        let nan = (quadratic(&x, &target) * f64::NAN).unwrap();
        assert!(matches!(opt.step(&nan), Err(TrainError::NonFinite(_))));
        assert_eq!(x.as_tensor().to_vec1::<f32>().unwrap(), before);
        assert_eq!(opt.steps(), 50);
    }
}
