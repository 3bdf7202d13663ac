"""Adapters to trainer stacks' environment shapes (they import no trainer stack).

- `rllm.SweForgeRLLMEnv`: rLLM's `BaseEnv`.
- `skyrl.SweForgeSkyRLEnv`: SkyRL's `BaseTextEnv`.
"""

from .rllm import SweForgeRLLMEnv
from .skyrl import SweForgeSkyRLEnv

__all__ = ["SweForgeRLLMEnv", "SweForgeSkyRLEnv"]
