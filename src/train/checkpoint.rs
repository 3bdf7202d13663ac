//! Hugging Face checkpoint directories: `config.json`, `tokenizer.json` and safetensors
//! weights (one `model.safetensors`, or shards listed by `model.safetensors.index.json`),
//! read into a `VarMap` of trainable f32 variables and written back in the same layout.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use candle_core::safetensors::MmapedSafetensors;
use candle_core::{DType, Device, Tensor, Var};
use candle_nn::VarMap;

use super::config::Qwen2Config;
use super::TrainError;

pub const CONFIG_FILE: &str = "config.json";
pub const TOKENIZER_FILE: &str = "tokenizer.json";
pub const WEIGHTS_FILE: &str = "model.safetensors";
pub const INDEX_FILE: &str = "model.safetensors.index.json";

/// The safetensors files holding a checkpoint's weights: the shards named by
/// `model.safetensors.index.json` when it exists, else `model.safetensors`, else every
/// `*.safetensors` file of the directory (sorted by name).
pub fn weight_files(dir: &Path) -> Result<Vec<PathBuf>, TrainError> {
    let index = dir.join(INDEX_FILE);
    if index.is_file() {
        let text = std::fs::read_to_string(&index).map_err(|e| TrainError::io(&index, e))?;
        let bad = |message: String| TrainError::Checkpoint {
            file: index.clone(),
            message,
        };
        let doc: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
        let map = doc
            .get("weight_map")
            .and_then(|m| m.as_object())
            .ok_or_else(|| bad("missing key `weight_map`".to_string()))?;
        let mut shards = BTreeSet::new();
        for (name, file) in map {
            let file = file
                .as_str()
                .ok_or_else(|| bad(format!("key `weight_map.{name}`: expected a file name")))?;
            shards.insert(file.to_string());
        }
        if shards.is_empty() {
            return Err(bad("key `weight_map`: lists no shard".to_string()));
        }
        return shards
            .into_iter()
            .map(|shard| {
                let path = dir.join(&shard);
                if path.is_file() {
                    Ok(path)
                } else {
                    Err(bad(format!("shard `{shard}` is missing")))
                }
            })
            .collect();
    }
    let single = dir.join(WEIGHTS_FILE);
    if single.is_file() {
        return Ok(vec![single]);
    }
    let entries = std::fs::read_dir(dir).map_err(|e| TrainError::io(dir, e))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "safetensors"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(TrainError::Checkpoint {
            file: dir.to_path_buf(),
            message: format!("no {WEIGHTS_FILE}, {INDEX_FILE} or other .safetensors file"),
        });
    }
    Ok(files)
}

/// Reads the weights `cfg` needs from `files` into a `VarMap` of f32 variables on `device`.
/// A missing tensor or a shape other than the config implies is an error naming the tensor
/// and the file; tensors the model does not use are skipped with a warning.
pub fn load_varmap(
    cfg: &Qwen2Config,
    files: &[PathBuf],
    device: &Device,
) -> Result<VarMap, TrainError> {
    let mut stores = Vec::with_capacity(files.len());
    let mut owner: HashMap<String, usize> = HashMap::new();
    for (i, file) in files.iter().enumerate() {
        // SAFETY: the file is memory-mapped read-only for the duration of this function; the
        // checkpoint must not be modified while it loads (as for any safetensors reader).
        let store =
            unsafe { MmapedSafetensors::new(file) }.map_err(|e| TrainError::Checkpoint {
                file: file.clone(),
                message: format!("not a readable safetensors file: {e}"),
            })?;
        for (name, _) in store.tensors() {
            owner.insert(name, i);
        }
        stores.push(store);
    }
    let where_missing = if files.len() == 1 {
        files[0].clone()
    } else {
        files[0]
            .parent()
            .map(|d| d.join(INDEX_FILE))
            .unwrap_or_else(|| PathBuf::from(INDEX_FILE))
    };
    let varmap = VarMap::new();
    let specs = cfg.weight_specs();
    {
        let mut data = varmap
            .data()
            .lock()
            .expect("a fresh VarMap lock is not poisoned");
        for spec in &specs {
            let Some(&i) = owner.get(&spec.name) else {
                return Err(TrainError::Checkpoint {
                    file: where_missing,
                    message: format!("missing tensor `{}`", spec.name),
                });
            };
            let bad = |message: String| TrainError::Checkpoint {
                file: files[i].clone(),
                message,
            };
            let tensor = stores[i]
                .load(&spec.name, device)
                .map_err(|e| bad(format!("tensor `{}`: {e}", spec.name)))?;
            if tensor.dims() != spec.shape.as_slice() {
                return Err(bad(format!(
                    "tensor `{}` has shape {:?}, config.json implies {:?}",
                    spec.name,
                    tensor.dims(),
                    spec.shape
                )));
            }
            let tensor = tensor
                .to_dtype(DType::F32)
                .map_err(|e| bad(format!("tensor `{}`: {e}", spec.name)))?;
            data.insert(spec.name.clone(), Var::from_tensor(&tensor)?);
        }
    }
    let used: BTreeSet<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    let unused: Vec<&String> = owner
        .keys()
        .filter(|n| !used.contains(n.as_str()))
        .collect();
    if !unused.is_empty() {
        let mut names: Vec<&str> = unused.iter().map(|s| s.as_str()).collect();
        names.sort_unstable();
        tracing::warn!(
            count = names.len(),
            first = names[0],
            "checkpoint tensors not used by the model (skipped)"
        );
    }
    Ok(varmap)
}

/// Writes the variables of `varmap` to one safetensors file (with the `format: pt` metadata
/// that Hugging Face loaders expect).
pub fn save_weights(varmap: &VarMap, path: &Path) -> Result<(), TrainError> {
    let tensors: BTreeMap<String, Tensor> = {
        let data = varmap.data().lock().map_err(|_| TrainError::Checkpoint {
            file: path.to_path_buf(),
            message: "the variable store is poisoned by a panic".to_string(),
        })?;
        data.iter()
            .map(|(k, v)| (k.clone(), v.as_tensor().clone()))
            .collect()
    };
    let metadata = HashMap::from([("format".to_string(), "pt".to_string())]);
    safetensors::tensor::serialize_to_file(&tensors, Some(metadata), path).map_err(|e| {
        TrainError::Checkpoint {
            file: path.to_path_buf(),
            message: format!("cannot write: {e}"),
        }
    })
}

/// Writes `config.json` for `cfg` into `dir`.
pub fn save_config(cfg: &Qwen2Config, dir: &Path) -> Result<(), TrainError> {
    let path = dir.join(CONFIG_FILE);
    let text = serde_json::to_string_pretty(&cfg.to_json()).expect("a JSON value serializes");
    std::fs::write(&path, text + "\n").map_err(|e| TrainError::io(&path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::model::Qwen2;

    fn tiny() -> Qwen2Config {
        let mut cfg = Qwen2Config::small(300);
        cfg.num_hidden_layers = 1;
        cfg
    }

    // Saved weights load back identical, with every variable present.
    #[test]
    fn save_then_load() {
        let cfg = tiny();
        let dir = tempfile::tempdir().unwrap();
        let varmap = Qwen2::init_varmap(&cfg, 5, &Device::Cpu).unwrap();
        save_weights(&varmap, &dir.path().join(WEIGHTS_FILE)).unwrap();
        let files = weight_files(dir.path()).unwrap();
        let loaded = load_varmap(&cfg, &files, &Device::Cpu).unwrap();
        let a = varmap.data().lock().unwrap();
        let b = loaded.data().lock().unwrap();
        assert_eq!(a.len(), b.len());
        for (name, var) in a.iter() {
            let diff = (var.as_tensor() - b[name].as_tensor())
                .unwrap()
                .abs()
                .unwrap();
            let max = diff
                .flatten_all()
                .unwrap()
                .max(0)
                .unwrap()
                .to_scalar::<f32>()
                .unwrap();
            assert_eq!(max, 0.0, "{name}");
        }
    }

    // A missing tensor, a wrong shape and an empty directory are errors naming what is wrong.
    #[test]
    fn bad_checkpoints() {
        let cfg = tiny();
        let dir = tempfile::tempdir().unwrap();
        let err = weight_files(dir.path()).unwrap_err().to_string();
        assert!(err.contains("no model.safetensors"), "{err}");

        let path = dir.path().join(WEIGHTS_FILE);
        let varmap = Qwen2::init_varmap(&cfg, 5, &Device::Cpu).unwrap();
        varmap.data().lock().unwrap().remove("model.norm.weight");
        save_weights(&varmap, &path).unwrap();
        let err = load_varmap(&cfg, std::slice::from_ref(&path), &Device::Cpu)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.ends_with("model.safetensors: missing tensor `model.norm.weight`"),
            "{err}"
        );

        let mut wider = cfg.clone();
        wider.intermediate_size = 400;
        let varmap = Qwen2::init_varmap(&cfg, 5, &Device::Cpu).unwrap();
        save_weights(&varmap, &path).unwrap();
        let err = load_varmap(&wider, &[path], &Device::Cpu)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("tensor `model.layers.0.mlp.gate_proj.weight` has shape [384, 128]"),
            "{err}"
        );
    }

    // An index naming a shard that is not there is reported with the shard's name.
    #[test]
    fn index_with_missing_shard() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(INDEX_FILE),
            r#"{"metadata":{},"weight_map":{"model.norm.weight":"model-00001-of-00002.safetensors"}}"#,
        )
        .unwrap();
        let err = weight_files(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("shard `model-00001-of-00002.safetensors` is missing"),
            "{err}"
        );
    }
}
