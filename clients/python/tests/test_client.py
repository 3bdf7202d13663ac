"""The client against a real `swe-forge serve`.

Environment:
- `SWE_FORGE_SERVE_URL`: the server (`http://127.0.0.1:PORT`). Unset: every test here skips.
- `SWE_FORGE_SERVE_TOKEN`: the server's `--token`, if it has one (the 401 tests run then).
- `SWE_FORGE_SERVE_TASK`: an instance id the server serves (default: the task of a sampled
  reset).

Run: `python -m unittest discover -s clients/python/tests` (the package is imported from the
source tree; no install needed).
"""

from __future__ import annotations

import json
import os
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from swe_forge_client import TOOL_NAMES, SweForgeEnv, SweForgeError, SweForgeWsEnv  # noqa: E402
from swe_forge_client.adapters.rllm import SweForgeRLLMEnv  # noqa: E402
from swe_forge_client.adapters.skyrl import SweForgeSkyRLEnv  # noqa: E402

URL = os.environ.get("SWE_FORGE_SERVE_URL") or None
TOKEN = os.environ.get("SWE_FORGE_SERVE_TOKEN") or None
TASK = os.environ.get("SWE_FORGE_SERVE_TASK") or None

NO_SERVER = (
    "SWE_FORGE_SERVE_URL is not set: these tests need a running `swe-forge serve` "
    "(the Rust integration test starts one and sets it)"
)

# Seconds a call may take in these tests (submit grades: the tests run three times).
TIMEOUT = float(os.environ.get("SWE_FORGE_SERVE_TEST_TIMEOUT", "600"))


def new_env() -> SweForgeEnv:
    return SweForgeEnv(URL, token=TOKEN, timeout=TIMEOUT)


def close_quietly(env, session_id=None) -> None:
    """Close a session a test opened; one already ended may be refused."""
    try:
        env.close(session_id)
    except SweForgeError:
        pass


_task_id = TASK


def task_id() -> str:
    """The task the tests reset on: SWE_FORGE_SERVE_TASK, else a sampled reset's."""
    global _task_id
    if _task_id is None:
        env = new_env()
        result = env.reset()
        _task_id = result.observation["task_id"]
        close_quietly(env)
    return _task_id


def tool_names(tools) -> set:
    """The names of OpenAI function schemas (`{"type": "function", "function": {"name"}}`,
    or `{"name"}`)."""
    names = set()
    for tool in tools:
        names.add(tool.get("function", tool).get("name"))
    return names


@unittest.skipUnless(URL, NO_SERVER)
class HealthAndSchemaTests(unittest.TestCase):
    def test_health(self):
        health = SweForgeEnv(URL, timeout=TIMEOUT).health()  # no token: /health needs none
        self.assertEqual(health["status"], "ok")
        self.assertGreaterEqual(health["tasks"], 1)
        self.assertIsInstance(health["sessions"], int)

    def test_schema_lists_the_tools(self):
        schema = new_env().schema()
        for key in ("action", "tools", "observation"):
            self.assertIn(key, schema)
        self.assertTrue(set(TOOL_NAMES) <= tool_names(schema["tools"]), schema["tools"])


@unittest.skipUnless(URL, NO_SERVER)
class ResetTests(unittest.TestCase):
    def test_reset_with_a_task_id(self):
        env = new_env()
        tid = task_id()
        result = env.reset(task_id=tid)
        self.addCleanup(close_quietly, env)
        obs = result.observation
        self.assertIsInstance(obs["instruction"], str)
        self.assertTrue(obs["instruction"].strip())
        self.assertIsInstance(obs["session_id"], str)
        self.assertTrue(obs["session_id"])
        self.assertEqual(obs["task_id"], tid)
        self.assertTrue(set(TOOL_NAMES) <= tool_names(obs["tools"]))
        self.assertIsNone(result.reward)
        self.assertFalse(result.done)
        self.assertEqual(env.session_id, obs["session_id"])
        self.assertEqual(env.state()["status"], "active")

    def test_reset_of_an_unknown_task_is_a_4xx(self):
        with self.assertRaises(SweForgeError) as caught:
            new_env().reset(task_id="no-such-task-anywhere")
        self.assertTrue(400 <= caught.exception.status < 500, caught.exception)
        self.assertTrue(caught.exception.message)


@unittest.skipUnless(URL, NO_SERVER)
class ToolTests(unittest.TestCase):
    """Tools in one session (none ends it)."""

    @classmethod
    def setUpClass(cls):
        cls.env = new_env()
        cls.env.reset(task_id=task_id())

    @classmethod
    def tearDownClass(cls):
        close_quietly(cls.env)

    def test_bash_ls(self):
        result = self.env.bash("ls")
        self.assertIsNone(result.error, result.observation)
        self.assertEqual(result.observation["exit_code"], 0)
        self.assertIsInstance(result.observation["output"], str)
        self.assertFalse(result.observation["timed_out"])
        self.assertFalse(result.done)
        self.assertIsNone(result.reward)

    def test_bash_reports_a_failing_command(self):
        result = self.env.bash("exit 3")
        self.assertEqual(result.observation["exit_code"], 3)

    def test_read_file_of_a_missing_path_is_an_error_observation(self):
        result = self.env.read_file("no/such/file-anywhere.txt")
        self.assertIsNotNone(result.error, result.observation)
        self.assertFalse(result.done)
        # The episode goes on.
        self.assertEqual(self.env.state()["status"], "active")

    def test_write_then_read_file(self):
        self.assertTrue(
            self.env.write_file("swe_forge_client_probe.txt", "one\ntwo\n").observation["ok"]
        )
        self.assertTrue(
            self.env.edit("swe_forge_client_probe.txt", "two", "three").observation["ok"]
        )
        read = self.env.read_file("swe_forge_client_probe.txt")
        self.assertIn("three", read.observation["content"])
        self.assertIsNotNone(self.env.edit("swe_forge_client_probe.txt", "absent", "x").error)
        self.env.bash("rm -f swe_forge_client_probe.txt")

    def test_unknown_tool_is_an_error_observation_or_a_4xx(self):
        try:
            result = self.env.step({"tool": "no_such_tool", "arguments": {}})
        except SweForgeError as e:
            self.assertIsNotNone(e.status, e)
            self.assertTrue(400 <= e.status < 500, e)
            self.assertTrue(e.message)
        else:
            self.assertIsNotNone(result.error, result.observation)
            self.assertFalse(result.done)

    def test_openai_tool_call_shape(self):
        call = {
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": "echo shape"})},
        }
        result = self.env.step(call)
        self.assertEqual(result.observation["exit_code"], 0)
        self.assertIn("shape", result.observation["output"])


@unittest.skipUnless(URL, NO_SERVER)
class SubmitTests(unittest.TestCase):
    """One session, submitted without a change."""

    @classmethod
    def setUpClass(cls):
        cls.env = new_env()
        cls.env.reset(task_id=task_id())
        cls.result = cls.env.submit()

    @classmethod
    def tearDownClass(cls):
        close_quietly(cls.env)

    def test_submit_with_no_change_gives_reward_0_and_done(self):
        self.assertEqual(self.result.reward, 0)
        self.assertTrue(self.result.done)
        self.assertEqual(self.result.info.get("failure_type"), "empty-patch", self.result.info)

    def test_state_after_submit_says_submitted(self):
        state = self.env.state()
        self.assertEqual(state["status"], "submitted")
        self.assertEqual(state["reward"], 0)
        self.assertEqual(state["session_id"], self.env.session_id)


@unittest.skipUnless(URL, NO_SERVER)
class RLLMAdapterTests(unittest.TestCase):
    def test_round_trip(self):
        env = SweForgeRLLMEnv.from_dict(
            {"base_url": URL, "task_id": task_id(), "token": TOKEN, "timeout": TIMEOUT}
        )
        self.addCleanup(env.close)
        self.assertTrue(env.is_multithread_safe())
        obs, info = env.reset()
        self.assertTrue(obs["instruction"].strip())
        self.assertEqual(info["session_id"], obs["session_id"])
        obs, reward, done, info = env.step({"tool": "bash", "arguments": {"command": "ls"}})
        self.assertEqual(obs["exit_code"], 0)
        self.assertEqual(reward, 0.0)
        self.assertFalse(done)
        # An OpenAI tool call as JSON text.
        text = json.dumps({"name": "bash", "arguments": json.dumps({"command": "echo text"})})
        obs, reward, done, info = env.step(text)
        self.assertIn("text", obs["output"])
        # Text that is no tool call is an error observation.
        obs, reward, done, info = env.step("not a tool call")
        self.assertIn("error", obs)
        self.assertFalse(done)
        final = env.compute_final_reward()
        self.assertIsInstance(final, float)
        self.assertEqual(final, 0.0)
        self.assertEqual(env.client.state()["status"], "submitted")


@unittest.skipUnless(URL, NO_SERVER)
class SkyRLAdapterTests(unittest.TestCase):
    def test_init_and_steps(self):
        # The instruction, as a plain reset of the task gives it (closed before the adapter's
        # session opens: the server may run one session at a time).
        probe = new_env()
        instruction = probe.reset(task_id=task_id()).observation["instruction"]
        close_quietly(probe)

        env = SweForgeSkyRLEnv(
            {"base_url": URL, "token": TOKEN, "timeout": TIMEOUT}, {"task_id": task_id()}
        )
        self.addCleanup(env.close)
        messages, metadata = env.init([])
        self.assertEqual([m["role"] for m in messages], ["system", "user"])
        self.assertEqual(metadata["task_id"], task_id())
        self.assertIn(instruction, "\n".join(m["content"] for m in messages))
        for name in TOOL_NAMES:
            self.assertIn(name, messages[0]["content"])

        out = env.step(
            'I will list the files.\n```json\n{"tool": "bash", "arguments": {"command": "echo listed; ls"}}\n```'
        )
        self.assertEqual(set(out), {"observations", "reward", "done", "metadata"})
        self.assertEqual(len(out["observations"]), 1)
        self.assertIn("listed", out["observations"][0]["content"])
        self.assertIn("exit code 0", out["observations"][0]["content"])
        self.assertEqual(out["reward"], 0.0)
        self.assertFalse(out["done"])

        out = env.step("garbage with no tool call in it")
        self.assertFalse(out["done"])
        self.assertEqual(out["reward"], 0.0)
        self.assertTrue(out["observations"][0]["content"].startswith("error:"))

        out = env.step('{"tool": "submit", "arguments": {}}')
        self.assertTrue(out["done"])
        self.assertEqual(out["reward"], 0.0)
        self.assertEqual(out["observations"], [])


@unittest.skipUnless(URL, NO_SERVER)
class WebSocketTests(unittest.TestCase):
    def test_reset_step_state_close(self):
        with SweForgeWsEnv(URL, token=TOKEN, timeout=TIMEOUT) as env:
            result = env.reset(task_id=task_id())
            sid = result.observation["session_id"]
            self.assertTrue(result.observation["instruction"].strip())
            self.assertEqual(env.session_id, sid)
            step = env.bash("ls")
            self.assertEqual(step.observation["exit_code"], 0)
            self.assertIsNotNone(env.read_file("no/such/file-anywhere.txt").error)
            state = env.state()
            self.assertEqual(state["session_id"], sid)
            self.assertEqual(state["status"], "active")
            closed = env.close()
            self.assertEqual(closed["status"], "closed")
            # The HTTP side sees the same session.
            self.assertEqual(new_env().state(sid)["status"], "closed")


@unittest.skipUnless(URL, NO_SERVER)
@unittest.skipUnless(TOKEN, "SWE_FORGE_SERVE_TOKEN is not set: the server takes no token")
class TokenTests(unittest.TestCase):
    def assert401(self, call):
        with self.assertRaises(SweForgeError) as caught:
            call()
        self.assertEqual(caught.exception.status, 401, caught.exception)

    def test_requests_without_the_token_get_401(self):
        bare = SweForgeEnv(URL, timeout=TIMEOUT)
        self.assertEqual(bare.health()["status"], "ok")
        self.assert401(bare.schema)
        self.assert401(bare.reset)
        self.assert401(bare.curriculum)
        self.assert401(lambda: bare.state("any-session"))
        self.assert401(SweForgeEnv(URL, token=TOKEN + "-wrong", timeout=TIMEOUT).schema)

    def test_websocket_without_the_token_gets_401(self):
        self.assert401(SweForgeWsEnv(URL, timeout=TIMEOUT).connect)


@unittest.skipUnless(URL, NO_SERVER)
class CurriculumAndMetricsTests(unittest.TestCase):
    def test_curriculum_and_metrics(self):
        env = new_env()
        self.assertIsInstance(env.curriculum(), dict)
        self.assertIsInstance(env.metrics(), dict)
        text = env.metrics(prometheus=True)
        self.assertIsInstance(text, str)
        self.assertTrue(text.strip())


if __name__ == "__main__":
    unittest.main()
