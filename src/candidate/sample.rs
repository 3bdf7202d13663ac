//! Sampling: a deterministic draw of candidates under the budget's caps and category mix.

use super::{Budget, Candidate};
use std::collections::HashMap;

/// Deterministic sample: order candidates by blake3(seed ‖ candidate.hash), take greedily
/// under the caps, return sorted by (file, byte_range, mutator).
///
/// With a category mix, the order is a weighted draw without replacement (each candidate's
/// key is −ln(u)/w, u uniform from the same hash, w its category's share over the category's
/// number of candidates; smallest first), so a category weighted twice as much fills about
/// twice as many of the first places.
pub fn sample(cands: Vec<Candidate>, budget: &Budget) -> Vec<Candidate> {
    sample_preferring(cands, budget, &|_| true)
}

/// [`sample`], drawing every `preferred` candidate before any other: the others only fill the
/// places the preferred ones leave under the caps (a run without test synthesis prefers the
/// candidates some test executes). The draw within each group is [`sample`]'s.
pub fn sample_preferring(
    cands: Vec<Candidate>,
    budget: &Budget,
    preferred: &dyn Fn(&Candidate) -> bool,
) -> Vec<Candidate> {
    let weighted = !budget.category_mix.is_empty();
    let mut per_category: HashMap<String, usize> = HashMap::new();
    if weighted {
        for c in &cands {
            *per_category.entry(c.category.clone()).or_default() += 1;
        }
    }
    let mut keyed: Vec<(bool, f64, [u8; 32], Candidate)> = cands
        .into_iter()
        .filter_map(|c| {
            let mut h = blake3::Hasher::new();
            h.update(&budget.seed.to_le_bytes());
            h.update(c.hash.as_bytes());
            let digest = *h.finalize().as_bytes();
            let key = if weighted {
                let share = budget.category_mix.get(&c.category).copied().unwrap_or(0.0);
                if !(share > 0.0 && share.is_finite()) {
                    return None;
                }
                let w = share / per_category[&c.category] as f64;
                // u in (0, 1] from the first 8 bytes of the hash.
                let bits = u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"));
                let u = ((bits >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
                -u.ln() / w
            } else {
                0.0
            };
            Some((!preferred(&c), key, digest, c))
        })
        .collect();
    keyed.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| a.1.total_cmp(&b.1))
            .then_with(|| a.2.cmp(&b.2))
            .then_with(|| a.3.order_key().cmp(&b.3.order_key()))
    });
    let mut per_function: HashMap<(String, String), usize> = HashMap::new();
    let mut per_mutator: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (_, _, _, c) in keyed {
        if budget.max_total.is_some_and(|m| out.len() >= m) {
            break;
        }
        let f = per_function
            .entry((c.file.clone(), c.function.clone()))
            .or_default();
        if budget.max_per_function.is_some_and(|m| *f >= m) {
            continue;
        }
        let m = per_mutator.entry(c.mutator.clone()).or_default();
        if budget.max_per_mutator.is_some_and(|max| *m >= max) {
            continue;
        }
        *f += 1;
        *m += 1;
        out.push(c);
    }
    out.sort_by(|a, b| a.order_key().cmp(&b.order_key()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::enumerate_source;
    use crate::candidate::tests::{python_rules, SHOP};
    use crate::lang::Language;
    use std::collections::BTreeMap;

    fn many_candidates() -> Vec<Candidate> {
        let rules = python_rules();
        let mut all =
            enumerate_source("shop.py", SHOP.as_bytes(), Language::Python, &rules).unwrap();
        all.extend(
            enumerate_source("b/shop.py", SHOP.as_bytes(), Language::Python, &rules).unwrap(),
        );
        all
    }

    #[test]
    fn preferred_candidates_are_drawn_first_and_the_others_fill_what_they_leave() {
        let all = many_candidates();
        let preferred = |c: &Candidate| c.file == "shop.py";
        let n_preferred = all.iter().filter(|c| preferred(c)).count();
        assert!(n_preferred > 10 && n_preferred < all.len());
        let budget = Budget {
            seed: 3,
            max_total: Some(10),
            ..Budget::default()
        };
        let a = sample_preferring(all.clone(), &budget, &preferred);
        assert_eq!(a.len(), 10);
        assert!(a.iter().all(preferred), "{a:?}");
        // Within the preferred group the draw is the plain sample's of that group.
        let only: Vec<Candidate> = all.iter().filter(|c| preferred(c)).cloned().collect();
        assert_eq!(a, sample(only, &budget));
        // A budget larger than the preferred group: every preferred one, then the others,
        // under the same caps.
        let budget = Budget {
            max_total: Some(n_preferred + 3),
            ..budget
        };
        let b = sample_preferring(all.clone(), &budget, &preferred);
        assert_eq!(b.len(), n_preferred + 3);
        assert_eq!(b.iter().filter(|c| preferred(c)).count(), n_preferred);
        // Preferring everything is the plain sample.
        assert_eq!(
            sample_preferring(all.clone(), &budget, &|_| true),
            sample(all, &budget)
        );
    }

    #[test]
    fn sampling_is_deterministic_and_respects_caps() {
        let all = many_candidates();
        assert!(all.len() > 40);
        let budget = Budget {
            seed: 7,
            max_total: Some(20),
            ..Budget::default()
        };
        let a = sample(all.clone(), &budget);
        let mut shuffled = all.clone();
        shuffled.reverse();
        let b = sample(shuffled, &budget);
        assert_eq!(a, b, "the input order does not matter");
        assert_eq!(a.len(), 20);
        let keys: Vec<_> = a.iter().map(|c| c.order_key()).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        let other = sample(
            all.clone(),
            &Budget {
                seed: 8,
                ..budget.clone()
            },
        );
        assert_ne!(a, other, "another seed, another sample");

        let capped = sample(
            all.clone(),
            &Budget {
                seed: 1,
                max_total: None,
                max_per_function: Some(2),
                max_per_mutator: Some(3),
                ..Budget::default()
            },
        );
        let mut per_function: HashMap<(&str, &str), usize> = HashMap::new();
        let mut per_mutator: HashMap<&str, usize> = HashMap::new();
        for c in &capped {
            *per_function.entry((&c.file, &c.function)).or_default() += 1;
            *per_mutator.entry(&c.mutator).or_default() += 1;
        }
        assert!(per_function.values().all(|n| *n <= 2));
        assert!(per_mutator.values().all(|n| *n <= 3));
        assert_eq!(sample(all.clone(), &Budget::default()).len(), all.len());
    }

    /// A category mix sets the categories' shares of the draw, whatever their number of
    /// candidates, and leaves out the categories it does not name.
    #[test]
    fn a_category_mix_weights_the_draw() {
        let all = many_candidates();
        let mut by_cat: BTreeMap<&str, usize> = BTreeMap::new();
        for c in &all {
            *by_cat.entry(&c.category).or_default() += 1;
        }
        let mut big: Vec<(&str, usize)> = by_cat
            .iter()
            .filter(|(_, n)| **n >= 10)
            .map(|(c, n)| (*c, *n))
            .collect();
        big.sort_by_key(|b| std::cmp::Reverse(b.1));
        assert!(
            big.len() >= 2,
            "the fixture has two categories of 10+ candidates: {big:?}"
        );
        let (heavy, light) = (big[1].0.to_string(), big[0].0.to_string());
        let (mut n_heavy, mut n_light) = (0usize, 0usize);
        for seed in 0..20 {
            let budget = Budget {
                seed,
                max_total: Some(8),
                category_mix: BTreeMap::from([(heavy.clone(), 9.0), (light.clone(), 1.0)]),
                ..Budget::default()
            };
            let picked = sample(all.clone(), &budget);
            assert_eq!(picked.len(), 8);
            for c in &picked {
                assert!(c.category == heavy || c.category == light, "{}", c.category);
                n_heavy += usize::from(c.category == heavy);
                n_light += usize::from(c.category == light);
            }
        }
        assert!(
            n_heavy as f64 / (n_heavy + n_light) as f64 > 0.7,
            "{heavy} (weight 9): {n_heavy}, {light} (weight 1): {n_light}"
        );
        // Equal weights give equal shares to a category of many candidates and one of few
        // (per-candidate weights would give the small one about n_small / (n_small + n_rich)).
        let (rich, n_rich) = big[0];
        let (poor, n_poor) = by_cat
            .iter()
            .map(|(c, n)| (*c, *n))
            .find(|(_, n)| *n >= 3 && *n * 3 <= n_rich)
            .expect("a category with a third of the richest one's candidates");
        let (mut got_poor, mut got_rich) = (0usize, 0usize);
        for seed in 0..40 {
            let budget = Budget {
                seed,
                max_total: Some(2),
                category_mix: BTreeMap::from([(rich.to_string(), 1.0), (poor.to_string(), 1.0)]),
                ..Budget::default()
            };
            for c in sample(all.clone(), &budget) {
                got_poor += usize::from(c.category == poor);
                got_rich += usize::from(c.category == rich);
            }
        }
        let share = got_poor as f64 / (got_poor + got_rich) as f64;
        assert!(
            (0.35..=0.65).contains(&share),
            "{poor} ({n_poor} candidates): {got_poor}, {rich} ({n_rich} candidates): {got_rich}"
        );
        // Weight 0 leaves a category out entirely.
        let only = sample(
            all.clone(),
            &Budget {
                seed: 3,
                category_mix: BTreeMap::from([(heavy.clone(), 1.0), (light.clone(), 0.0)]),
                ..Budget::default()
            },
        );
        assert_eq!(only.len(), big[1].1);
        assert!(only.iter().all(|c| c.category == heavy));
    }
}
