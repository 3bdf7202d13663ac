"""The values the server answers with, and the client's error."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional

__all__ = ["StepResult", "SweForgeError"]


class SweForgeError(Exception):
    """The server refused a request, or could not be reached.

    `status` is the HTTP status (None when no answer came, or for a WebSocket error message
    that gives none), `message` the server's `error` text (or what went wrong on the way),
    `body` the raw answer when there was one.
    """

    def __init__(self, message: str, status: Optional[int] = None, body: Optional[str] = None):
        self.message = message
        self.status = status
        self.body = body
        super().__init__(f"HTTP {status}: {message}" if status is not None else message)


@dataclass
class StepResult:
    """What `reset` and `step` answer.

    `reward` is None until `submit`; `done` is true once the episode is over (after `submit`).
    A tool error (bad arguments, a missing file) is an observation holding `"error"`.
    """

    observation: Dict[str, Any] = field(default_factory=dict)
    reward: Optional[float] = None
    done: bool = False
    info: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "StepResult":
        """A step result from the server's JSON; raises `SweForgeError` if it is not one."""
        if not isinstance(data, Mapping) or not isinstance(data.get("observation"), Mapping):
            raise SweForgeError(f"not a step result: {_excerpt(data)}")
        reward = data.get("reward")
        if reward is not None and not isinstance(reward, (int, float)):
            raise SweForgeError(f"a step result's reward is not a number: {reward!r}")
        info = data.get("info") or {}
        return cls(
            observation=dict(data["observation"]),
            reward=None if reward is None else float(reward),
            done=bool(data.get("done", False)),
            info=dict(info) if isinstance(info, Mapping) else {"info": info},
        )

    def to_dict(self) -> Dict[str, Any]:
        return {
            "observation": self.observation,
            "reward": self.reward,
            "done": self.done,
            "info": self.info,
        }

    @property
    def error(self) -> Optional[str]:
        """The tool error of the observation, if it is an error observation."""
        err = self.observation.get("error")
        return None if err is None else str(err)


def _excerpt(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"
