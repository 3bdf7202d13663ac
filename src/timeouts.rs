//! Timeouts: the one policy for how long a test run may take, from what the clean suite took.
//! Verification limits come from the baseline's own runs; replays of a finished task (audit,
//! training's reward, the Harbor verifier) from the longest run its record shows; synthesis
//! from the verification limit.

use crate::runner::RunBudget;
use std::time::Duration;

/// How the limits of verification runs follow from the baseline's runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeoutPolicy {
    /// CPU limit per process: `factor ×` the most CPU a baseline run used `+ slack`.
    pub factor: f64,
    pub slack: Duration,
    /// Wall-clock limit: `wall_factor ×` the slowest baseline run `+ wall_slack`, at least
    /// twice the CPU limit (the CPU limit catches endless loops whatever the machine's load;
    /// the wall clock catches hangs that use no CPU).
    pub wall_factor: f64,
    pub wall_slack: Duration,
    /// No limit is below this.
    pub min_timeout: Duration,
}

impl Default for TimeoutPolicy {
    fn default() -> Self {
        TimeoutPolicy {
            factor: 3.0,
            slack: Duration::from_secs(5),
            wall_factor: 10.0,
            wall_slack: Duration::from_secs(30),
            min_timeout: Duration::from_secs(10),
        }
    }
}

impl TimeoutPolicy {
    /// `(wall seconds, CPU seconds)` of a verification run, from the slowest baseline run's
    /// wall seconds and, where measured, its CPU seconds.
    pub fn verification(&self, suite_wall_s: f64, suite_cpu_s: Option<f64>) -> (f64, Option<f64>) {
        let min = self.min_timeout.as_secs_f64();
        let cpu = suite_cpu_s.map(|c| (self.factor * c + self.slack.as_secs_f64()).max(min));
        let wall = (self.wall_factor * suite_wall_s + self.wall_slack.as_secs_f64())
            .max(2.0 * cpu.unwrap_or(min))
            .max(min);
        (wall, cpu)
    }
}

/// The limit of one synthesis helper run (the tracer's replays and searches): five times a
/// verification run's wall limit, at least 50 s.
pub fn synthesis(run_timeout_s: f64) -> Duration {
    Duration::from_secs_f64(run_timeout_s.max(10.0) * 5.0)
}

/// The limits of one replay of a finished task (audit): ten times the longest run its record
/// shows, plus a minute, at most an hour; no CPU limit.
pub fn replay(longest_recorded_s: f64) -> RunBudget {
    RunBudget::wall(Duration::from_secs_f64(
        (longest_recorded_s * 10.0 + 60.0).min(3600.0),
    ))
}

/// The limits of grading an agent's edit (training's reward): a replay's wall limit, and a CPU
/// limit per process of three times the longest recorded run plus 10 s, so an edit that
/// loops forever is stopped soon.
pub fn reward(longest_recorded_s: f64) -> RunBudget {
    RunBudget {
        wall: replay(longest_recorded_s).wall,
        cpu: Some(Duration::from_secs_f64(longest_recorded_s * 3.0 + 10.0)),
    }
}

/// The seconds a Harbor task gives its verifier (which also builds nothing, but starts a
/// container and runs the suite): ten times the longest recorded run plus five minutes, at
/// least ten minutes.
pub fn harbor_verifier_s(longest_recorded_s: f64) -> f64 {
    (longest_recorded_s * 10.0 + 300.0).max(600.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_follow_the_suite_they_came_from() {
        let p = TimeoutPolicy::default();
        // 4 s of CPU: 3 × 4 + 5 = 17 s of CPU; 10 × 6 + 30 = 90 s of wall.
        assert_eq!(p.verification(6.0, Some(4.0)), (90.0, Some(17.0)));
        // A fast suite: the wall limit is at least twice the CPU limit, and at least the minimum.
        assert_eq!(p.verification(0.1, Some(20.0)), (130.0, Some(65.0)));
        assert_eq!(p.verification(0.0, None), (30.0, None));
        assert_eq!(synthesis(2.0), Duration::from_secs(50));
        assert_eq!(replay(10.0).wall, Duration::from_secs(160));
        assert_eq!(replay(1000.0).wall, Duration::from_secs(3600));
        assert_eq!(reward(10.0).cpu, Some(Duration::from_secs(40)));
        assert_eq!(harbor_verifier_s(10.0), 600.0);
        assert_eq!(harbor_verifier_s(100.0), 1300.0);
    }
}
