"""SkyRL's text environment shape (`skyrl_gym.envs.base_text_env.BaseTextEnv`), duck-typed.

SkyRL is not imported. Register the class with skyrl_gym under a name of your choice:

    from skyrl_gym.envs import register
    register(id="swe-forge", entry_point="swe_forge_client.adapters.skyrl:SweForgeSkyRLEnv")

`env_config` (the `environment.skyrl_gym.swe-forge` config) holds the server's `base_url`,
and optionally `token`, `timeout`, `max_turns`, `system_prompt`, `observation_role`. A
dataset row's extras (or their `extra_info`) name the task: `task_id`, or `sample` / `seed`
for a curriculum draw; any of the config keys may be given there too, and win.

`init` starts the session and answers the prompt (a system message with the tool protocol
and the tools' schemas, a user message with the task's instruction); each `step` reads one
tool call out of the model's text and answers its result as a chat message. The episode ends
when the model calls `submit`, or after `max_turns` steps (then the change is submitted for
it), with the reward of the grading.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..actions import ToolCallError, format_observation, make_action, parse_tool_call
from ..client import DEFAULT_TIMEOUT, DEFAULT_URL, SweForgeEnv
from ..models import StepResult, SweForgeError

__all__ = ["SweForgeSkyRLEnv", "DEFAULT_SYSTEM_PROMPT"]

Message = Dict[str, str]

#: The tool protocol told to the model; the tools' schemas follow it.
DEFAULT_SYSTEM_PROMPT = """\
You are working in a software repository to resolve the issue the user describes. You act \
through tools, one tool call per reply, and the result of each call comes back in the next \
message.

To call a tool, reply with one JSON object, on its own or in a ```json fenced block:
{"tool": "<tool name>", "arguments": {<the tool's arguments>}}

Commands run in the repository, without network access. When your change is complete, call \
the `submit` tool (no arguments): it grades your change with the task's tests and ends the \
episode."""


def _get(source: Any, key: str) -> Any:
    """`source[key]` for a dict or an OmegaConf DictConfig (anything with `get`); None when
    absent."""
    if source is None:
        return None
    getter = getattr(source, "get", None)
    if getter is None:
        return None
    try:
        return getter(key)
    except Exception:  # a DictConfig in struct mode refuses unknown keys
        return None


class SweForgeSkyRLEnv:
    """One task of `swe-forge serve` as a SkyRL text environment."""

    def __init__(self, env_config: Any = None, extras: Optional[Mapping[str, Any]] = None):
        extras = extras or {}
        # Where a setting is looked up, first to last.
        self._sources = [extras, _get(extras, "extra_info"), env_config]
        self.task_id: Optional[str] = self._setting("task_id")
        self.sample: Optional[bool] = self._setting("sample")
        self.seed: Optional[int] = self._setting("seed")
        max_turns = self._setting("max_turns")
        #: Steps before the change is submitted for the model (None: no limit here).
        self.max_turns: Optional[int] = None if max_turns is None else int(max_turns)
        self.system_prompt: str = self._setting("system_prompt") or DEFAULT_SYSTEM_PROMPT
        #: The role of the messages that carry tool results back ("user" by default, as in
        #: SkyRL's own text environments; "tool" needs a chat template that takes it).
        self.observation_role: str = self._setting("observation_role") or "user"
        timeout = self._setting("timeout")
        self.client = SweForgeEnv(
            self._setting("base_url") or DEFAULT_URL,
            token=self._setting("token"),
            timeout=DEFAULT_TIMEOUT if timeout is None else float(timeout),
        )
        self.turns = 0
        self.done = False
        #: The reward once the episode is over (None before).
        self.reward: Optional[float] = None
        self._open = False

    def _setting(self, key: str) -> Any:
        for source in self._sources:
            value = _get(source, key)
            if value is not None:
                return value
        return None

    def __repr__(self) -> str:
        return (
            f"SweForgeSkyRLEnv({self.client.base_url!r}, task_id={self.task_id!r}, "
            f"session_id={self.client.session_id!r})"
        )

    def init(self, prompt: Any = None) -> Tuple[List[Message], Dict[str, Any]]:
        """Start the episode: `(messages, metadata)`.

        The messages replace the dataset's prompt: a system message (the tool protocol and
        the tools' OpenAI schemas) and a user message (the task's instruction). The metadata
        holds `session_id`, `task_id` and the reset's `info`.
        """
        if self._open and not self.done:
            self.close()
        result = self.client.reset(task_id=self.task_id, sample=self.sample, seed=self.seed)
        self._open = True
        self.turns = 0
        self.done = False
        self.reward = None
        obs = result.observation
        tools = obs.get("tools")
        if not tools:
            tools = self.client.schema().get("tools", [])
        schemas = json.dumps(tools, indent=2)
        system = f"{self.system_prompt}\n\nTools (OpenAI function schemas):\n{schemas}"
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": str(obs.get("instruction", ""))},
        ]
        metadata = {
            "session_id": self.client.session_id,
            "task_id": self.client.task_id,
            "info": dict(result.info),
        }
        return messages, metadata

    def step(self, action: str) -> Dict[str, Any]:
        """One turn: the model's text `action` holds a tool call.

        Answers `{"observations": [messages], "reward": float, "done": bool, "metadata":
        {...}}`. A text with no readable tool call is answered with an error message (the
        episode goes on). When the episode ends (`submit`, or `max_turns` reached) there is
        no observation, `reward` is the grading's, and the metadata holds its `info`.
        """
        if self.done:
            return self._output([], 0.0, True, {"error": "the episode is over"})
        if not self._open:
            raise SweForgeError("no episode: call init() first")
        self.turns += 1
        try:
            call = parse_tool_call(action)
        except ToolCallError as e:
            result = None
            message = {"role": self.observation_role, "content": f"error: {e}"}
            metadata: Dict[str, Any] = {"parse_error": str(e)}
        else:
            result = self.client.step(call)
            message = {
                "role": self.observation_role,
                "content": format_observation(result.observation),
            }
            metadata = {"tool": call["tool"], "info": dict(result.info)}
            if result.error is not None:
                metadata["tool_error"] = result.error
        if result is not None and result.done:
            return self._end(result, metadata)
        if self.max_turns is not None and self.turns >= self.max_turns:
            metadata["truncated"] = True
            return self._end(self.client.step(make_action("submit")), metadata)
        return self._output([message], 0.0, False, metadata)

    def _end(self, result: StepResult, metadata: Dict[str, Any]) -> Dict[str, Any]:
        self.done = True
        self.reward = 0.0 if result.reward is None else result.reward
        metadata["info"] = dict(result.info)
        return self._output([], float(self.reward), True, metadata)

    def _output(
        self, observations: List[Message], reward: float, done: bool, metadata: Dict[str, Any]
    ) -> Dict[str, Any]:
        metadata.setdefault("session_id", self.client.session_id)
        metadata.setdefault("turns", self.turns)
        return {"observations": observations, "reward": reward, "done": done, "metadata": metadata}

    def close(self) -> None:
        """End the session on the server if it is still open (errors are ignored: the server
        ends idle sessions itself)."""
        if self._open and self.client.session_id is not None:
            try:
                self.client.close()
            except SweForgeError:
                pass
        self._open = False
