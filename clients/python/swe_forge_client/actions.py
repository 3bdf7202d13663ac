"""Actions: the shapes a tool call comes in, reading one out of a model's text, and writing an
observation back as text for a chat model.

The server's action is `{"tool": "<name>", "arguments": {...}}`. Models and trainer stacks
produce other shapes: OpenAI tool calls (`{"function": {"name", "arguments": "<JSON text>"}}`
or `{"name", "arguments"}`), an assistant message with `tool_calls`, JSON text, a JSON object
inside prose or a fenced block, Hermes/Qwen `<tool_call>` tags. `normalize_action` and
`parse_tool_call` turn any of them into the server's shape.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Iterator, List, Mapping, Optional

__all__ = [
    "TOOL_NAMES",
    "ToolCallError",
    "format_observation",
    "make_action",
    "normalize_action",
    "normalize_actions",
    "parse_tool_call",
]

#: The tools the server offers (docs/serve.md, "Tools").
TOOL_NAMES = ("bash", "read_file", "edit", "write_file", "run_tests", "submit")


class ToolCallError(ValueError):
    """An action holds no tool call that can be read. Its message is written to be shown to
    the model as an error observation."""


def make_action(tool: str, **arguments: Any) -> Dict[str, Any]:
    """`{"tool": tool, "arguments": {...}}`, leaving out the arguments that are None."""
    return {"tool": tool, "arguments": {k: v for k, v in arguments.items() if v is not None}}


def _arguments(value: Any) -> Dict[str, Any]:
    """A call's arguments as a dict: a dict as it is, JSON text parsed, nothing as {}."""
    if value is None:
        return {}
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            value = json.loads(value)
        except ValueError as e:
            raise ToolCallError(f"the tool call's arguments are not valid JSON: {e}") from None
    if not isinstance(value, Mapping):
        raise ToolCallError("the tool call's arguments are not a JSON object")
    return dict(value)


def normalize_actions(action: Any) -> List[Dict[str, Any]]:
    """The tool calls in `action`, each as `{"tool", "arguments"}`.

    Reads: the server's action; `{"name", "arguments"}` (arguments as an object or as JSON
    text; `parameters` is read as `arguments`); an OpenAI tool call `{"function": {...}}`; an
    assistant message `{"tool_calls": [...]}`; a list of any of these; JSON text of any of
    these. Raises `ToolCallError` when `action` is none of them.
    """
    if isinstance(action, (bytes, bytearray)):
        action = action.decode("utf-8", "replace")
    if isinstance(action, str):
        try:
            action = json.loads(action)
        except ValueError:
            raise ToolCallError(
                'the action is not a JSON tool call: write {"tool": "<name>", "arguments": {...}}'
            ) from None
    if isinstance(action, (list, tuple)):
        calls: List[Dict[str, Any]] = []
        for item in action:
            calls.extend(normalize_actions(item))
        if not calls:
            raise ToolCallError("the action holds no tool call")
        return calls
    if not isinstance(action, Mapping):
        raise ToolCallError(f"the action is a {type(action).__name__}, not a tool call")
    if "tool_calls" in action and "tool" not in action and "name" not in action:
        return normalize_actions(action["tool_calls"] or [])
    if isinstance(action.get("function"), Mapping):
        return normalize_actions(action["function"])
    name = action.get("tool", action.get("name"))
    if not isinstance(name, str) or not name.strip():
        raise ToolCallError(
            'the tool call names no tool: write {"tool": "<name>", "arguments": {...}}'
        )
    args = action.get("arguments", action.get("parameters"))
    return [{"tool": name.strip(), "arguments": _arguments(args)}]


def normalize_action(action: Any) -> Dict[str, Any]:
    """The one tool call in `action` (see `normalize_actions`); more than one is an error."""
    calls = normalize_actions(action)
    if len(calls) != 1:
        raise ToolCallError(f"the action holds {len(calls)} tool calls; make one call at a time")
    return calls[0]


_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_FENCED = re.compile(r"```[ \t]*[A-Za-z0-9_+.-]*[ \t]*\r?\n(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


def _embedded_objects(text: str) -> Iterator[Any]:
    """The JSON objects that stand in `text`, outermost only, in order."""
    pos = text.find("{")
    while pos >= 0:
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except ValueError:
            pos = text.find("{", pos + 1)
            continue
        yield value
        pos = text.find("{", end)


def _candidates(text: str) -> Iterator[Any]:
    """JSON values that may be the tool call of `text`, most explicit first: the whole text,
    `<tool_call>` blocks, fenced blocks, then objects standing in the prose."""
    stripped = text.strip()
    try:
        yield json.loads(stripped)
    except ValueError:
        pass
    for pattern in (_TAGGED, _FENCED):
        for m in pattern.finditer(text):
            try:
                yield json.loads(m.group(1))
            except ValueError:
                pass
    yield from _embedded_objects(text)


def parse_tool_call(text: str) -> Dict[str, Any]:
    """The tool call a model's reply holds, as `{"tool", "arguments"}`.

    The reply may be the JSON of a call (any shape `normalize_actions` reads), or prose with
    the call in a ```json fenced block, in `<tool_call>` tags or standing in the text. When
    several are there, the first is taken (the most explicit form first: the whole text, then
    tags, then fences, then bare objects). Raises `ToolCallError` when there is none.
    """
    if not isinstance(text, str):
        raise ToolCallError(f"the action is a {type(text).__name__}, not text")
    last: Optional[ToolCallError] = None
    for candidate in _candidates(text):
        try:
            return normalize_action(candidate)
        except ToolCallError as e:
            last = e
    hint = 'reply with one JSON object {"tool": "<name>", "arguments": {...}}'
    if last is not None:
        raise ToolCallError(f"no usable tool call in the reply ({last}); {hint}")
    raise ToolCallError(f"no tool call in the reply; {hint}")


def format_observation(observation: Mapping[str, Any]) -> str:
    """An observation as text for a chat model.

    An error observation reads `error: …`; `bash` gives its output and exit code; `read_file`
    its content; `run_tests` its output and each test's status; `{"ok": true}` reads `ok`;
    anything else is its JSON.
    """
    if observation.get("error") is not None:
        return f"error: {observation['error']}"
    if "exit_code" in observation and "output" in observation:
        status = f"exit code {observation['exit_code']}"
        if observation.get("timed_out"):
            status += ", timed out"
        output = str(observation["output"] or "")
        return f"{output}{'' if not output or output.endswith(chr(10)) else chr(10)}[{status}]"
    if "content" in observation and set(observation) <= {"content", "lines"}:
        return str(observation["content"])
    if isinstance(observation.get("results"), Mapping):
        lines = [str(observation.get("output") or "").rstrip("\n")]
        lines += [f"{test}: {status}" for test, status in observation["results"].items()]
        return "\n".join(line for line in lines if line) or "no tests ran"
    if set(observation) == {"ok"} and observation["ok"] is True:
        return "ok"
    return json.dumps(observation, ensure_ascii=False, indent=1, sort_keys=True)
