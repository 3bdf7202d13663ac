//! Shard: one of N parts of a run (`run --shard K/N`). The candidates a run samples are
//! partitioned by a hash of their ids, so that the union of the N shards' candidates is exactly
//! the set one `run` with the same `--seed` and budgets samples, and each shard decides its
//! part alone (its own output directory; `merge` joins them).

use std::fmt;
use std::str::FromStr;

/// Shard `index` (0-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Whether the candidate with this id belongs to this shard: the first 8 bytes of its
    /// id's blake3 hash, modulo the shard count.
    pub fn contains(&self, candidate_id: &str) -> bool {
        shard_of(candidate_id, self.count) == self.index
    }
}

/// The shard (of `count`) a candidate id belongs to.
pub fn shard_of(candidate_id: &str, count: usize) -> usize {
    let h = blake3::hash(candidate_id.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&h.as_bytes()[..8]);
    (u64::from_le_bytes(first) % count.max(1) as u64) as usize
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `K/N` with 0 ≤ K < N (Slurm's `SLURM_ARRAY_TASK_ID` and Kubernetes'
    /// `JOB_COMPLETION_INDEX` count from 0).
    fn from_str(s: &str) -> Result<Shard, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}`: a shard is K/N (K from 0 to N-1)"))?;
        let index: usize = k
            .trim()
            .parse()
            .map_err(|_| format!("`{s}`: K is a number"))?;
        let count: usize = n
            .trim()
            .parse()
            .map_err(|_| format!("`{s}`: N is a number"))?;
        if count == 0 || index >= count {
            return Err(format!("`{s}`: K runs from 0 to N-1, and N is at least 1"));
        }
        Ok(Shard { index, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_ids() {
        let ids: Vec<String> = (0..500).map(|i| format!("{i:016x}")).collect();
        for n in [1, 2, 3, 7] {
            let shards: Vec<Shard> = (0..n).map(|index| Shard { index, count: n }).collect();
            for id in &ids {
                assert_eq!(shards.iter().filter(|s| s.contains(id)).count(), 1, "{id}");
            }
            // Roughly even.
            for s in &shards {
                let k = ids.iter().filter(|id| s.contains(id)).count();
                assert!(k * n >= ids.len() / 2, "{s}: {k}");
            }
        }
        assert_eq!(
            "1/2".parse::<Shard>().unwrap(),
            Shard { index: 1, count: 2 }
        );
        for bad in ["2/2", "1", "a/2", "0/0", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
