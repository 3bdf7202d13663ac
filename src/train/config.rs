//! `Qwen2Config`: the model's hyper-parameters, read from and written to a Hugging Face
//! `config.json`, and the list of weights (names and shapes) they imply.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::TrainError;

/// The hyper-parameters of a Qwen2 causal language model (the subset of a Hugging Face
/// `config.json` that the architecture needs; sliding-window keys are read past, since the
/// model always attends to the whole sequence).
#[derive(Debug, Clone, PartialEq)]
pub struct Qwen2Config {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub num_key_value_heads: usize,
    pub max_position_embeddings: usize,
    pub rope_theta: f64,
    pub rms_norm_eps: f64,
    pub tie_word_embeddings: bool,
    /// The MLP activation; only `silu` is supported.
    pub hidden_act: String,
    /// `eos_token_id` from the config (a number or a list in the file); empty when absent.
    pub eos_token_ids: Vec<u32>,
}

/// What a weight is, which decides how a fresh model initializes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightKind {
    /// A projection matrix or the embedding table: small random values.
    Matrix,
    /// A projection bias: zeros.
    Bias,
    /// An RMSNorm scale: ones.
    Norm,
}

/// One weight of the model: its Hugging Face name and shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeightSpec {
    pub name: String,
    pub shape: Vec<usize>,
    pub kind: WeightKind,
}

impl Qwen2Config {
    /// The small configuration for CPU runs and tests: 4 layers of width 128 (4 query heads of
    /// 32, 2 key/value heads), MLP width 384, tied embeddings, 2048 positions.
    pub fn small(vocab_size: usize) -> Self {
        Qwen2Config {
            vocab_size,
            hidden_size: 128,
            intermediate_size: 384,
            num_hidden_layers: 4,
            num_attention_heads: 4,
            num_key_value_heads: 2,
            max_position_embeddings: 2048,
            rope_theta: 10_000.0,
            rms_norm_eps: 1e-6,
            tie_word_embeddings: true,
            hidden_act: "silu".to_string(),
            eos_token_ids: Vec::new(),
        }
    }

    /// The width of one attention head.
    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_attention_heads
    }

    /// Reads and checks `config.json`; errors name the file and the key at fault.
    pub fn from_file(path: &Path) -> Result<Self, TrainError> {
        let text = std::fs::read_to_string(path).map_err(|e| TrainError::io(path, e))?;
        Self::from_json_str(&text, path)
    }

    /// Parses and checks the text of a `config.json`; `file` is only used in error messages.
    pub fn from_json_str(text: &str, file: &Path) -> Result<Self, TrainError> {
        let err = |message: String| TrainError::Config {
            file: file.to_path_buf(),
            message,
        };
        let value: Value =
            serde_json::from_str(text).map_err(|e| err(format!("not valid JSON: {e}")))?;
        let obj = value
            .as_object()
            .ok_or_else(|| err("expected a JSON object".to_string()))?;
        let keys = Keys { obj, file };
        if let Some(model_type) = keys.opt_str("model_type")? {
            if model_type != "qwen2" {
                return Err(err(format!(
                    "key `model_type`: `{model_type}` is not a qwen2 model"
                )));
            }
        }
        if let Some(scaling) = obj.get("rope_scaling") {
            if !scaling.is_null() {
                return Err(err(
                    "key `rope_scaling`: rope scaling is not supported".into()
                ));
            }
        }
        let num_attention_heads = keys.usize("num_attention_heads")?;
        let config = Qwen2Config {
            vocab_size: keys.usize("vocab_size")?,
            hidden_size: keys.usize("hidden_size")?,
            intermediate_size: keys.usize("intermediate_size")?,
            num_hidden_layers: keys.usize("num_hidden_layers")?,
            num_attention_heads,
            num_key_value_heads: keys
                .opt_usize("num_key_value_heads")?
                .unwrap_or(num_attention_heads),
            max_position_embeddings: keys.opt_usize("max_position_embeddings")?.unwrap_or(32_768),
            rope_theta: keys.opt_f64("rope_theta")?.unwrap_or(10_000.0),
            rms_norm_eps: keys.opt_f64("rms_norm_eps")?.unwrap_or(1e-6),
            tie_word_embeddings: keys.opt_bool("tie_word_embeddings")?.unwrap_or(false),
            hidden_act: keys.opt_str("hidden_act")?.unwrap_or("silu").to_string(),
            eos_token_ids: keys.ids("eos_token_id")?,
        };
        if let Some(head_dim) = keys.opt_usize("head_dim")? {
            if config.num_attention_heads > 0 && head_dim != config.head_dim() {
                return Err(err(format!(
                    "key `head_dim`: {head_dim} differs from hidden_size / num_attention_heads = {}",
                    config.head_dim()
                )));
            }
        }
        config.validate().map_err(err)?;
        Ok(config)
    }

    /// Checks that the hyper-parameters describe a model that can be built; the message names
    /// the key at fault.
    pub fn validate(&self) -> Result<(), String> {
        for (key, value) in [
            ("vocab_size", self.vocab_size),
            ("hidden_size", self.hidden_size),
            ("intermediate_size", self.intermediate_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("num_key_value_heads", self.num_key_value_heads),
            ("max_position_embeddings", self.max_position_embeddings),
        ] {
            if value == 0 {
                return Err(format!("key `{key}`: must be at least 1"));
            }
        }
        if self.hidden_size % self.num_attention_heads != 0 {
            return Err(format!(
                "key `num_attention_heads`: {} does not divide hidden_size {}",
                self.num_attention_heads, self.hidden_size
            ));
        }
        if self.head_dim() % 2 != 0 {
            return Err(format!(
                "key `num_attention_heads`: head width {} is odd; rotary embeddings need it even",
                self.head_dim()
            ));
        }
        if self.num_attention_heads % self.num_key_value_heads != 0 {
            return Err(format!(
                "key `num_key_value_heads`: {} does not divide num_attention_heads {}",
                self.num_key_value_heads, self.num_attention_heads
            ));
        }
        if !(self.rope_theta.is_finite() && self.rope_theta > 0.0) {
            return Err("key `rope_theta`: must be a positive number".to_string());
        }
        if !(self.rms_norm_eps.is_finite() && self.rms_norm_eps > 0.0) {
            return Err("key `rms_norm_eps`: must be a positive number".to_string());
        }
        if self.hidden_act != "silu" {
            return Err(format!(
                "key `hidden_act`: `{}` is not supported (only `silu`)",
                self.hidden_act
            ));
        }
        if let Some(id) = self
            .eos_token_ids
            .iter()
            .find(|&&id| id as usize >= self.vocab_size)
        {
            return Err(format!(
                "key `eos_token_id`: {id} is outside the vocabulary of {}",
                self.vocab_size
            ));
        }
        Ok(())
    }

    /// The `config.json` document for this configuration, in the Hugging Face layout.
    pub fn to_json(&self) -> Value {
        let mut doc = json!({
            "architectures": ["Qwen2ForCausalLM"],
            "model_type": "qwen2",
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "max_position_embeddings": self.max_position_embeddings,
            "rope_theta": self.rope_theta,
            "rms_norm_eps": self.rms_norm_eps,
            "tie_word_embeddings": self.tie_word_embeddings,
            "hidden_act": self.hidden_act,
            "use_sliding_window": false,
            "torch_dtype": "float32",
        });
        let eos = match self.eos_token_ids.as_slice() {
            [] => None,
            [one] => Some(json!(one)),
            many => Some(json!(many)),
        };
        if let (Some(eos), Some(map)) = (eos, doc.as_object_mut()) {
            map.insert("eos_token_id".to_string(), eos);
        }
        doc
    }

    /// Every weight of the model, in the Hugging Face Qwen2 naming, in a fixed order.
    /// `lm_head.weight` is absent when the embeddings are tied.
    pub fn weight_specs(&self) -> Vec<WeightSpec> {
        let h = self.hidden_size;
        let kv = self.num_key_value_heads * self.head_dim();
        let spec = |name: String, shape: Vec<usize>, kind| WeightSpec { name, shape, kind };
        let mut specs = vec![spec(
            "model.embed_tokens.weight".to_string(),
            vec![self.vocab_size, h],
            WeightKind::Matrix,
        )];
        for i in 0..self.num_hidden_layers {
            let p = format!("model.layers.{i}");
            specs.extend([
                spec(
                    format!("{p}.input_layernorm.weight"),
                    vec![h],
                    WeightKind::Norm,
                ),
                spec(
                    format!("{p}.self_attn.q_proj.weight"),
                    vec![h, h],
                    WeightKind::Matrix,
                ),
                spec(
                    format!("{p}.self_attn.q_proj.bias"),
                    vec![h],
                    WeightKind::Bias,
                ),
                spec(
                    format!("{p}.self_attn.k_proj.weight"),
                    vec![kv, h],
                    WeightKind::Matrix,
                ),
                spec(
                    format!("{p}.self_attn.k_proj.bias"),
                    vec![kv],
                    WeightKind::Bias,
                ),
                spec(
                    format!("{p}.self_attn.v_proj.weight"),
                    vec![kv, h],
                    WeightKind::Matrix,
                ),
                spec(
                    format!("{p}.self_attn.v_proj.bias"),
                    vec![kv],
                    WeightKind::Bias,
                ),
                spec(
                    format!("{p}.self_attn.o_proj.weight"),
                    vec![h, h],
                    WeightKind::Matrix,
                ),
                spec(
                    format!("{p}.post_attention_layernorm.weight"),
                    vec![h],
                    WeightKind::Norm,
                ),
                spec(
                    format!("{p}.mlp.gate_proj.weight"),
                    vec![self.intermediate_size, h],
                    WeightKind::Matrix,
                ),
                spec(
                    format!("{p}.mlp.up_proj.weight"),
                    vec![self.intermediate_size, h],
                    WeightKind::Matrix,
                ),
                spec(
                    format!("{p}.mlp.down_proj.weight"),
                    vec![h, self.intermediate_size],
                    WeightKind::Matrix,
                ),
            ]);
        }
        specs.push(spec(
            "model.norm.weight".to_string(),
            vec![h],
            WeightKind::Norm,
        ));
        if !self.tie_word_embeddings {
            specs.push(spec(
                "lm_head.weight".to_string(),
                vec![self.vocab_size, h],
                WeightKind::Matrix,
            ));
        }
        specs
    }

    /// The number of scalar parameters (tied embeddings counted once).
    pub fn num_parameters(&self) -> usize {
        self.weight_specs()
            .iter()
            .map(|s| s.shape.iter().product::<usize>())
            .sum()
    }
}

/// Typed reads of a config object's keys, with errors that name the key.
struct Keys<'a> {
    obj: &'a Map<String, Value>,
    file: &'a Path,
}

impl Keys<'_> {
    fn err(&self, key: &str, what: &str) -> TrainError {
        TrainError::Config {
            file: self.file.to_path_buf(),
            message: format!("key `{key}`: {what}"),
        }
    }

    fn present(&self, key: &str) -> Option<&Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }

    fn usize(&self, key: &str) -> Result<usize, TrainError> {
        self.opt_usize(key)?.ok_or_else(|| TrainError::Config {
            file: self.file.to_path_buf(),
            message: format!("missing key `{key}`"),
        })
    }

    fn opt_usize(&self, key: &str) -> Result<Option<usize>, TrainError> {
        match self.present(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| self.err(key, &format!("expected a non-negative integer, got {v}"))),
        }
    }

    fn opt_f64(&self, key: &str) -> Result<Option<f64>, TrainError> {
        match self.present(key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| self.err(key, &format!("expected a number, got {v}"))),
        }
    }

    fn opt_bool(&self, key: &str) -> Result<Option<bool>, TrainError> {
        match self.present(key) {
            None => Ok(None),
            Some(v) => v
                .as_bool()
                .map(Some)
                .ok_or_else(|| self.err(key, &format!("expected true or false, got {v}"))),
        }
    }

    fn opt_str(&self, key: &str) -> Result<Option<&str>, TrainError> {
        match self.present(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(Some)
                .ok_or_else(|| self.err(key, &format!("expected a string, got {v}"))),
        }
    }

    /// A token id or a list of token ids; empty when absent.
    fn ids(&self, key: &str) -> Result<Vec<u32>, TrainError> {
        let one = |v: &Value| v.as_u64().and_then(|n| u32::try_from(n).ok());
        match self.present(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    one(v).ok_or_else(|| self.err(key, &format!("expected a token id, got {v}")))
                })
                .collect(),
            Some(v) => one(v)
                .map(|id| vec![id])
                .ok_or_else(|| self.err(key, &format!("expected a token id or a list, got {v}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Qwen2Config, TrainError> {
        Qwen2Config::from_json_str(text, Path::new("config.json"))
    }

    // A Qwen2.5-style config.json (extra keys, eos as a number) parses to the right values.
    #[test]
    fn reads_hugging_face_config() {
        let cfg = parse(
            r#"{"architectures":["Qwen2ForCausalLM"],"model_type":"qwen2","vocab_size":151936,
            "hidden_size":896,"intermediate_size":4864,"num_hidden_layers":24,
            "num_attention_heads":14,"num_key_value_heads":2,"max_position_embeddings":32768,
            "rope_theta":1000000.0,"rms_norm_eps":1e-06,"tie_word_embeddings":true,
            "hidden_act":"silu","sliding_window":32768,"use_sliding_window":false,
            "max_window_layers":21,"torch_dtype":"bfloat16","eos_token_id":151643,
            "rope_scaling":null}"#,
        )
        .unwrap();
        assert_eq!(cfg.hidden_size, 896);
        assert_eq!(cfg.head_dim(), 64);
        assert_eq!(cfg.num_key_value_heads, 2);
        assert_eq!(cfg.rope_theta, 1e6);
        assert!(cfg.tie_word_embeddings);
        assert_eq!(cfg.eos_token_ids, vec![151643]);
        // Qwen2.5-0.5B has 494,032,768 parameters with tied embeddings.
        assert_eq!(cfg.num_parameters(), 494_032_768);
    }

    // A missing required key is reported with the file and the key's name.
    #[test]
    fn missing_key_is_named() {
        let err = parse(r#"{"vocab_size":10,"intermediate_size":8,"num_hidden_layers":1,"num_attention_heads":2}"#)
            .unwrap_err();
        assert_eq!(err.to_string(), "config.json: missing key `hidden_size`");
    }

    // A key of the wrong type and an unsupported activation are reported by key.
    #[test]
    fn bad_values_are_named() {
        let base = r#""vocab_size":10,"intermediate_size":8,"num_hidden_layers":1,"num_attention_heads":2"#;
        let err = parse(&format!(r#"{{{base},"hidden_size":"big"}}"#)).unwrap_err();
        assert!(
            err.to_string()
                .contains("key `hidden_size`: expected a non-negative integer"),
            "{err}"
        );
        let err = parse(&format!(
            r#"{{{base},"hidden_size":8,"hidden_act":"gelu"}}"#
        ))
        .unwrap_err();
        assert!(err.to_string().contains("key `hidden_act`"), "{err}");
        let err = parse(&format!(
            r#"{{{base},"hidden_size":8,"num_key_value_heads":3}}"#
        ))
        .unwrap_err();
        assert!(
            err.to_string().contains("key `num_key_value_heads`"),
            "{err}"
        );
    }

    // What to_json writes, from_json_str reads back unchanged (eos as a list included).
    #[test]
    fn json_round_trip() {
        let mut cfg = Qwen2Config::small(300);
        cfg.eos_token_ids = vec![0, 5];
        let text = cfg.to_json().to_string();
        assert_eq!(parse(&text).unwrap(), cfg);
    }

    // The untied layout adds lm_head.weight; names follow the Hugging Face Qwen2 layout.
    #[test]
    fn weight_names() {
        let mut cfg = Qwen2Config::small(300);
        let names: Vec<String> = cfg.weight_specs().into_iter().map(|s| s.name).collect();
        assert_eq!(names.len(), 1 + 4 * 12 + 1);
        assert!(names.contains(&"model.layers.3.self_attn.k_proj.bias".to_string()));
        assert!(!names.contains(&"lm_head.weight".to_string()));
        cfg.tie_word_embeddings = false;
        let specs = cfg.weight_specs();
        let head = specs.iter().find(|s| s.name == "lm_head.weight").unwrap();
        assert_eq!(head.shape, vec![300, 128]);
    }
}
