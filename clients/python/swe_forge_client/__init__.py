"""Python client of swe-forge's environment server (`swe-forge serve`).

- `SweForgeEnv`: the HTTP client (OpenEnv-style `reset` / `step` / `state` / `close`).
- `SweForgeWsEnv`: the same over one WebSocket connection.
- `swe_forge_client.adapters.rllm.SweForgeRLLMEnv`: rLLM's `BaseEnv` shape.
- `swe_forge_client.adapters.skyrl.SweForgeSkyRLEnv`: SkyRL's `BaseTextEnv` shape.

The contract the server keeps is `docs/serve.md` in the swe-forge repository.
"""

from ._version import __version__
from .actions import (
    TOOL_NAMES,
    ToolCallError,
    format_observation,
    make_action,
    normalize_action,
    normalize_actions,
    parse_tool_call,
)
from .client import DEFAULT_TIMEOUT, DEFAULT_URL, SweForgeEnv, SweForgeWsEnv
from .models import StepResult, SweForgeError

__all__ = [
    "__version__",
    "DEFAULT_TIMEOUT",
    "DEFAULT_URL",
    "StepResult",
    "SweForgeEnv",
    "SweForgeError",
    "SweForgeWsEnv",
    "TOOL_NAMES",
    "ToolCallError",
    "format_observation",
    "make_action",
    "normalize_action",
    "normalize_actions",
    "parse_tool_call",
]
