//! Rule sets: rules compiled into one query, and the edits each match makes.

use super::rewrite::{unglue, Edit};
use super::{Compiled, Mutator};
use crate::lang::Syntax;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tree_sitter::{Node, Query, QueryMatch, QueryPredicateArg};

/// Rules compiled into one query, so that a tree is walked once for all of them; matches
/// are dispatched to their rule by pattern index.
pub(crate) struct RuleSet {
    /// `None` for a single rule, whose own query is used.
    combined: Option<Query>,
    members: Vec<Arc<Compiled>>,
    /// The rule of each pattern of the query.
    pattern_rule: Vec<usize>,
    /// Per rule: its own capture index → the query's capture index.
    remap: Vec<Vec<u32>>,
}

impl RuleSet {
    /// The set of `rules` (all of one language); built once per distinct list and cached.
    pub(crate) fn of(rules: &[&Mutator]) -> Result<Arc<RuleSet>, String> {
        type Cache = Mutex<HashMap<Vec<usize>, Arc<RuleSet>>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let key: Vec<usize> = rules
            .iter()
            .map(|r| Arc::as_ptr(&r.rule) as usize)
            .collect();
        let cache = CACHE.get_or_init(Default::default);
        if let Some(set) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(set.clone());
        }
        let set = Arc::new(RuleSet::build(rules)?);
        if rules.len() > 1 {
            let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
            if cache.len() >= 64 {
                cache.clear();
            }
            // The set holds the rules' `Arc`s, so no key can be reused by other rules.
            cache.insert(key, set.clone());
        }
        Ok(set)
    }

    fn build(rules: &[&Mutator]) -> Result<RuleSet, String> {
        let members: Vec<Arc<Compiled>> = rules.iter().map(|r| r.rule.clone()).collect();
        let mut pattern_rule = Vec::new();
        for (i, m) in members.iter().enumerate() {
            pattern_rule.extend(std::iter::repeat_n(i, m.query.pattern_count()));
        }
        let combined = match rules {
            [] | [_] => None,
            [first, ..] => {
                let source: String = members
                    .iter()
                    .map(|m| format!("{}\n", m.query_source))
                    .collect();
                let query = Query::new(&first.language.grammar(), &source)
                    .map_err(|e| format!("rules do not combine into one query: {e}"))?;
                if query.pattern_count() != pattern_rule.len() {
                    return Err("rules do not combine into one query: pattern count differs".into());
                }
                Some(query)
            }
        };
        let remap = members
            .iter()
            .map(|m| {
                m.query
                    .capture_names()
                    .iter()
                    .enumerate()
                    .map(|(i, name)| match &combined {
                        Some(q) => q.capture_index_for_name(name).unwrap_or(u32::MAX),
                        None => i as u32,
                    })
                    .collect()
            })
            .collect();
        Ok(RuleSet {
            combined,
            members,
            pattern_rule,
            remap,
        })
    }

    /// The query to run; `None` for an empty set.
    pub(crate) fn query(&self) -> Option<&Query> {
        match &self.combined {
            Some(q) => Some(q),
            None => self.members.first().map(|m| &m.query),
        }
    }

    /// The edits one match makes, appended to `out`; returns the index of the rule.
    pub(crate) fn edits<'t>(
        &self,
        m: &QueryMatch<'_, 't>,
        src: &str,
        syntax: &dyn Syntax,
        out: &mut Vec<Edit<'t>>,
    ) -> usize {
        let rule = self.pattern_rule[m.pattern_index];
        if !self.predicates_hold(m, src, syntax) {
            return rule;
        }
        let cx = Captures {
            m,
            remap: &self.remap[rule],
        };
        let from = out.len();
        self.members[rule].rewrite.edits(&cx, src, syntax, out);
        for e in &mut out[from..] {
            unglue(src, e);
        }
        rule
    }
}

impl RuleSet {
    /// Whether the match satisfies its pattern's `#kind?`/`#not-kind?`/`#return-type?`/
    /// `#compatible-types?` predicates.
    fn predicates_hold(&self, m: &QueryMatch<'_, '_>, src: &str, syntax: &dyn Syntax) -> bool {
        let Some(query) = self.query() else {
            return true;
        };
        query.general_predicates(m.pattern_index).iter().all(|p| {
            if let (
                "compatible-types?",
                [QueryPredicateArg::Capture(a), QueryPredicateArg::Capture(b)],
            ) = (&*p.operator, &p.args[..])
            {
                let node = |i: &u32| m.captures.iter().find(|c| c.index == *i).map(|c| c.node);
                let (Some(a), Some(b)) = (node(a), node(b)) else {
                    return true;
                };
                return crate::lang::compatible_types(
                    syntax.declared_type(a, src).as_deref(),
                    syntax.declared_type(b, src).as_deref(),
                );
            }
            let [QueryPredicateArg::Capture(index), names @ ..] = &p.args[..] else {
                return true;
            };
            let listed = |name: &str| {
                names
                    .iter()
                    .any(|k| matches!(k, QueryPredicateArg::String(k) if &**k == name))
            };
            let mut nodes = m.captures.iter().filter(|c| c.index == *index);
            match &*p.operator {
                "return-type?" => {
                    nodes.all(|c| syntax.return_type_class(c.node).is_some_and(listed))
                }
                op => {
                    let positive = op == "kind?";
                    nodes.all(|c| listed(c.node.kind()) == positive)
                }
            }
        })
    }
}

/// A match seen through one rule's capture numbering.
pub(super) struct Captures<'a, 'c, 't> {
    m: &'a QueryMatch<'c, 't>,
    remap: &'a [u32],
}

impl<'t> Captures<'_, '_, 't> {
    pub(super) fn first(&self, own: u32) -> Option<Node<'t>> {
        let index = self.remap[own as usize];
        self.m
            .captures
            .iter()
            .find(|c| c.index == index)
            .map(|c| c.node)
    }

    pub(super) fn all(&self, own: u32) -> impl Iterator<Item = Node<'t>> + '_ {
        let index = self.remap[own as usize];
        self.m
            .captures
            .iter()
            .filter(move |c| c.index == index)
            .map(|c| c.node)
    }
}
