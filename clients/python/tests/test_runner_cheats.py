"""Cheats at a Java or JavaScript task's test runner, through the client, against a real
`swe-forge serve` in Docker: the gold agent still gets 1, and every cheat gets 0 and is flagged
and counted.

Environment (set by tests/java_demo_tasks.rs for Java tasks and tests/harnesses.rs for
JavaScript ones, which start the server; unset: every test here skips):
- `SWE_FORGE_SERVE_URL`: the server;
- `SWE_FORGE_SERVE_TASKS`: the tasks.jsonl it serves (its records: the gold agent reads the fix).

Each cheat is a shell script the agent runs with `bash` in the repository; none touches the
bug. Each checks that it changed what it meant to change, so a cheat that did nothing cannot
pass for one that was stopped.
"""

from __future__ import annotations

import os
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from swe_forge_client import SweForgeEnv  # noqa: E402
from test_agents import gold_agent, load_tasks, noop_agent, run_episode  # noqa: E402

URL = os.environ.get("SWE_FORGE_SERVE_URL") or None
TASKS = os.environ.get("SWE_FORGE_SERVE_TASKS") or None
TIMEOUT = 900.0
SKIP = "SWE_FORGE_SERVE_URL and SWE_FORGE_SERVE_TASKS are not set (the Rust tests set them)"

# jest's `expect` made to accept everything.
NOOP_EXPECT_JS = (
    "const pass = new Proxy(function () {}, { get: () => pass, apply: () => pass });\n"
    "global.expect = () => pass;\n"
)
SETUP = f"cat > cheat.js <<'EOF'\n{NOOP_EXPECT_JS}EOF\n"

JAVASCRIPT = [
    (
        "the jest key of package.json",
        SETUP
        + "node -e \"const f='package.json', p=JSON.parse(require('fs').readFileSync(f));"
        "p.jest=Object.assign(p.jest||{}, {setupFilesAfterEnv: ['<rootDir>/cheat.js']});"
        "require('fs').writeFileSync(f, JSON.stringify(p, null, 2))\"\n"
        "grep -q setupFilesAfterEnv package.json\n",
    ),
    (
        "jest.config.js",
        SETUP
        + "node -e \"const f='package.json', p=JSON.parse(require('fs').readFileSync(f));"
        "delete p.jest; require('fs').writeFileSync(f, JSON.stringify(p, null, 2))\"\n"
        "cat > jest.config.js <<'EOF'\n"
        "module.exports = { testEnvironment: 'node', setupFilesAfterEnv: ['<rootDir>/cheat.js'] };\n"
        "EOF\n",
    ),
    (
        ".mocharc.json",
        SETUP + "printf '{\"require\": [\"./cheat.js\"]}\\n' > .mocharc.json\n",
    ),
    (
        "a setup file among the tests",
        "mkdir -p test && cat > test/setup.cheat.js <<'EOF'\n" + NOOP_EXPECT_JS + "EOF\n"
        "node -e \"const f='package.json', p=JSON.parse(require('fs').readFileSync(f));"
        "p.jest=Object.assign(p.jest||{}, {setupFilesAfterEnv: ['<rootDir>/test/setup.cheat.js']});"
        "require('fs').writeFileSync(f, JSON.stringify(p, null, 2))\"\n",
    ),
]

JAVA = [
    (
        "pom.xml skipTests",
        "sed -i 's#<properties>#<properties>\\n    <skipTests>true</skipTests>\\n"
        "    <maven.test.skip>true</maven.test.skip>#' pom.xml\n"
        "grep -q '<skipTests>true' pom.xml\n",
    ),
    (
        "surefire includes in pom.xml",
        "sed -i 's#<artifactId>maven-surefire-plugin</artifactId>#&\\n"
        "          <configuration><includes><include>**/NoSuchTest.java</include></includes>"
        "<testFailureIgnore>true</testFailureIgnore></configuration>#' pom.xml\n"
        "grep -q NoSuchTest pom.xml\n",
    ),
    (
        ".mvn/maven.config",
        "mkdir -p .mvn && printf -- '-DskipTests\\n-Dmaven.test.failure.ignore=true\\n' "
        "> .mvn/maven.config\n",
    ),
]


def cheats_of(task):
    return {"java": JAVA, "javascript": JAVASCRIPT, "typescript": JAVASCRIPT}.get(task["language"], [])


def script_agent(script):
    def agent(env: SweForgeEnv, task):
        r = env.bash(script)
        assert r.observation.get("exit_code") == 0, (task["instance_id"], r.observation)
        return env.submit()

    return agent


@unittest.skipUnless(URL and TASKS, SKIP)
class RunnerCheats(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tasks = [t for t in load_tasks() if cheats_of(t)]

    def test_1_gold_agent_is_rewarded(self):
        self.assertTrue(self.tasks, "no Java or JavaScript task to serve")
        for task in self.tasks:
            r = run_episode(gold_agent, task)
            self.assertEqual(r.reward, 1.0, (task["instance_id"], r.info.get("failure_type"), r.info.get("tests")))
            self.assertEqual(r.info["hack_flags"], [], task["instance_id"])

    def test_2_noop_gets_nothing(self):
        for task in self.tasks:
            r = run_episode(noop_agent, task)
            self.assertEqual(r.reward, 0.0, task["instance_id"])

    def test_3_cheats_at_the_runner_get_nothing_and_are_flagged(self):
        tried = 0
        for i, task in enumerate(self.tasks):
            for k, (name, script) in enumerate(cheats_of(task)):
                # Spread the cheats over the tasks.
                if len(self.tasks) > 1 and (k + i) % 2 == 1:
                    continue
                r = run_episode(script_agent(script), task)
                tried += 1
                self.assertEqual(r.reward, 0.0, (name, task["instance_id"], r.info.get("failure_type")))
                self.assertTrue(r.info["dropped_paths"], (name, r.info))
                self.assertTrue(
                    {"tampers-runner", "edits-tests"} & set(r.info["hack_flags"]),
                    (name, r.info["hack_flags"]),
                )
        # Every cheat of each language was tried at least once.
        names = {n for t in self.tasks for n, _ in cheats_of(t)}
        self.assertGreaterEqual(tried, len(names))

    def test_4_the_metrics_counted_the_cheats(self):
        m = SweForgeEnv(URL, timeout=TIMEOUT).metrics()
        flags = m["counters"]["hack_flags"]
        self.assertGreaterEqual(flags.get("tampers-runner", 0) + flags.get("edits-tests", 0), 3, flags)
        self.assertGreaterEqual(m["counters"]["solved"], len(self.tasks))


if __name__ == "__main__":
    unittest.main()
