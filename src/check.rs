//! Check: which verification run a test run is (the clean baseline, the screen, the buggy,
//! fixed and synthesized-test checks) and its repeat, written as records and logs label it
//! (`baseline#2`, `screen`, `buggy#1`, `fixed#3`, `synth-clean#1`).

use std::fmt;

/// A kind of verification run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Check {
    /// The clean code, whole suite (a seed's baseline).
    Baseline,
    /// The covering tests with the bug, once, before the whole-suite buggy checks.
    Screen,
    /// The bug applied.
    Buggy,
    /// The gold fix applied (the clean tree, plus a task's test patch).
    Fixed,
    /// The clean code with a synthesized test file added.
    SynthClean,
}

impl Check {
    /// Every check, in the order verification runs them.
    pub const ALL: [Check; 5] = [
        Check::Baseline,
        Check::Screen,
        Check::SynthClean,
        Check::Buggy,
        Check::Fixed,
    ];

    /// The name a label starts with.
    pub fn name(self) -> &'static str {
        match self {
            Check::Baseline => "baseline",
            Check::Screen => "screen",
            Check::Buggy => "buggy",
            Check::Fixed => "fixed",
            Check::SynthClean => "synth-clean",
        }
    }

    /// Whether the check is repeated (its labels carry the repeat: `buggy#2`).
    pub fn repeated(self) -> bool {
        self != Check::Screen
    }

    /// The `repeat`-th run of this check (from 1).
    pub fn run(self, repeat: usize) -> CheckRun {
        CheckRun {
            check: self,
            repeat,
        }
    }

    /// Whether `label` names a run of this check.
    pub fn labels(self, label: &str) -> bool {
        CheckRun::parse(label).is_some_and(|r| r.check == self)
    }
}

/// One run of a check: its label is `buggy#1`, or `screen` for the check that runs once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CheckRun {
    pub check: Check,
    pub repeat: usize,
}

impl CheckRun {
    /// The label as records write it.
    pub fn label(self) -> String {
        self.to_string()
    }

    /// A label read back; `None` for one no check writes.
    pub fn parse(label: &str) -> Option<CheckRun> {
        let (name, repeat) = match label.split_once('#') {
            Some((n, r)) => (n, r.parse().ok()?),
            None => (label, 0),
        };
        let check = Check::ALL.into_iter().find(|c| c.name() == name)?;
        (check.repeated() == (repeat > 0)).then_some(CheckRun { check, repeat })
    }
}

impl fmt::Display for CheckRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.check.repeated() {
            write!(f, "{}#{}", self.check.name(), self.repeat)
        } else {
            f.write_str(self.check.name())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip_as_records_write_them() {
        assert_eq!(Check::Buggy.run(1).label(), "buggy#1");
        assert_eq!(Check::SynthClean.run(2).label(), "synth-clean#2");
        assert_eq!(Check::Screen.run(0).label(), "screen");
        for check in Check::ALL {
            let run = check.run(if check.repeated() { 3 } else { 0 });
            assert_eq!(CheckRun::parse(&run.label()), Some(run));
            assert!(check.labels(&run.label()));
        }
        assert!(!Check::Buggy.labels("fixed#1"));
        assert_eq!(CheckRun::parse("buggy"), None);
        assert_eq!(CheckRun::parse("screen#1"), None);
        assert_eq!(CheckRun::parse("coverage (unavailable)"), None);
    }
}
