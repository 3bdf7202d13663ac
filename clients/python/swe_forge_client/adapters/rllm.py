"""rLLM's environment shape (`rllm.environments.base.base_env.BaseEnv`), duck-typed.

rLLM is not imported: the class has the methods rLLM calls (`reset`, `step`, `close`,
`from_dict`, `is_multithread_safe`, `idx`) plus `compute_final_reward`, so it can be passed
where rLLM expects a `BaseEnv` subclass:

    from rllm.engine.agent_execution_engine import AgentExecutionEngine
    engine = AgentExecutionEngine(env_class=SweForgeRLLMEnv, env_args={...}, ...)

Each instance is one episode at a time of one task: `reset` starts a session on the server
(closing the one before if still open), `step` takes an action, `compute_final_reward`
submits if the agent has not.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..actions import ToolCallError, make_action, normalize_actions
from ..client import DEFAULT_TIMEOUT, DEFAULT_URL, SweForgeEnv
from ..models import StepResult, SweForgeError

__all__ = ["SweForgeRLLMEnv"]


class SweForgeRLLMEnv:
    """One task of `swe-forge serve` as an rLLM environment.

    `task_id`: the task (an instance id); None: the server's curriculum draws one at each
    reset (`sample`, `seed` as for `SweForgeEnv.reset`). `token`, `timeout`: as for
    `SweForgeEnv`.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        task_id: Optional[str] = None,
        token: Optional[str] = None,
        sample: Optional[bool] = None,
        seed: Optional[int] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
    ):
        self.client = SweForgeEnv(base_url, token=token, timeout=timeout)
        self.task_id = task_id
        self.sample = sample
        self.seed = seed
        #: The reward of the episode once it is over (None before).
        self.reward: Optional[float] = None
        #: Whether the episode is over (submitted).
        self.done = False
        #: The `info` of the last step result (the grading details after submit).
        self.info: Dict[str, Any] = {}
        self._open = False
        self._idx: Any = None

    def __repr__(self) -> str:
        return (
            f"SweForgeRLLMEnv({self.client.base_url!r}, task_id={self.task_id!r}, "
            f"session_id={self.client.session_id!r})"
        )

    # rLLM sets and reads `idx` (the environment's place in a batch).
    @property
    def idx(self) -> Any:
        return self._idx

    @idx.setter
    def idx(self, value: Any) -> None:
        self._idx = value

    def reset(self) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """Start an episode: `(observation, info)`, the observation holding `instruction`,
        `tools`, `session_id`, `task_id`."""
        if self._open and not self.done:
            self.close()
        result = self.client.reset(task_id=self.task_id, sample=self.sample, seed=self.seed)
        self._open = True
        self.done = False
        self.reward = None
        self.info = dict(result.info)
        info = dict(result.info)
        info.setdefault("session_id", self.client.session_id)
        info.setdefault("task_id", self.client.task_id)
        return result.observation, info

    def step(self, action: Any) -> Tuple[Dict[str, Any], float, bool, Dict[str, Any]]:
        """Take an action: `(observation, reward, done, info)`.

        `action`: a dict action `{"tool", "arguments"}`, an OpenAI tool call (or a message
        with `tool_calls`, or a list of calls, run in order), JSON text of one, or an object
        with an `action` attribute holding one (rLLM's `Action`). An action that cannot be
        read is an error observation (reward 0, not done), as a tool error is. `reward` is 0.0
        until the episode ends with `submit`.
        """
        if self.done:
            return (
                {"error": "the episode is over: reset to start another"},
                0.0,
                True,
                dict(self.info),
            )
        if not isinstance(action, (str, bytes, Mapping, list, tuple)) and hasattr(action, "action"):
            action = action.action
        try:
            calls = normalize_actions(action)
        except ToolCallError as e:
            return {"error": str(e)}, 0.0, False, {"parse_error": True}
        outputs: List[Tuple[str, StepResult]] = []
        for call in calls:
            result = self.client.step(call)
            outputs.append((call["tool"], result))
            if result.done:
                break
        tool, last = outputs[-1]
        if len(outputs) == 1:
            observation = last.observation
        else:
            observation = {
                "results": [{"tool": t, "observation": r.observation} for t, r in outputs]
            }
        self.info = dict(last.info)
        info = dict(last.info)
        info["tool"] = tool
        if last.done:
            self.done = True
            self.reward = 0.0 if last.reward is None else last.reward
        reward = 0.0 if last.reward is None else float(last.reward)
        return observation, reward, last.done, info

    def compute_final_reward(self) -> float:
        """The episode's reward: submits first if the episode is not over."""
        if not self.done:
            if not self._open:
                raise SweForgeError("no episode: call reset() first")
            result = self.client.step(make_action("submit"))
            self.info = dict(result.info)
            self.done = True
            self.reward = 0.0 if result.reward is None else result.reward
        return float(self.reward or 0.0)

    def close(self) -> None:
        """End the session on the server if it is still open (errors are ignored: the
        server ends idle sessions itself)."""
        if self._open and self.client.session_id is not None:
            try:
                self.client.close()
            except SweForgeError:
                pass
        self._open = False

    @staticmethod
    def from_dict(extra_info: Mapping[str, Any]) -> "SweForgeRLLMEnv":
        """An environment from a dataset row's `extra_info`: `base_url`, `task_id`, and
        optionally `token`, `sample`, `seed`, `timeout`."""
        info = dict(extra_info or {})
        return SweForgeRLLMEnv(
            base_url=info.get("base_url") or DEFAULT_URL,
            task_id=info.get("task_id"),
            token=info.get("token"),
            sample=info.get("sample"),
            seed=info.get("seed"),
            timeout=info.get("timeout", DEFAULT_TIMEOUT),
        )

    @staticmethod
    def is_multithread_safe() -> bool:
        """Each instance has its own session and makes plain HTTP requests: instances may
        run on different threads at once."""
        return True
