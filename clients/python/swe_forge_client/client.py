"""OpenEnv-style clients of `swe-forge serve` (the contract: docs/serve.md).

`SweForgeEnv` speaks HTTP, one request per call; `SweForgeWsEnv` keeps one WebSocket
connection (`GET /ws`). Both remember the session of their last `reset`, so `step`, `state`
and `close` need no session id in the common case of one episode at a time per client.

    env = SweForgeEnv("http://127.0.0.1:8080")
    result = env.reset(task_id="pyshelf__3f1c9a0b7d2e")
    print(result.observation["instruction"])
    print(env.bash("ls").observation["output"])
    print(env.submit().reward)
"""

from __future__ import annotations

import http.client
import json
import math
import socket
from typing import Any, Dict, Iterable, Mapping, Optional, Union
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode, urlsplit, urlunsplit
from urllib.request import ProxyHandler, Request, build_opener

from ._version import __version__
from .actions import make_action
from .models import StepResult, SweForgeError
from .websocket import WebSocket, WebSocketError, WebSocketHandshakeError

__all__ = ["DEFAULT_URL", "DEFAULT_TIMEOUT", "SweForgeEnv", "SweForgeWsEnv"]

DEFAULT_URL = "http://127.0.0.1:8080"

#: Seconds a call may wait for its answer. Generous: `submit` grades the patch (the tests run
#: three times) and `bash` commands may run up to 600 seconds.
DEFAULT_TIMEOUT = 900.0

# Beyond a bash command's own timeout, the seconds its answer may take to come back.
_TOOL_TIMEOUT_MARGIN = 60.0

_USER_AGENT = f"swe-forge-client/{__version__}"


def _reset_body(
    task_id: Optional[str], sample: Optional[bool], seed: Optional[int]
) -> Dict[str, Any]:
    """The body of `/reset`: the fields given (none at all: the server samples a task)."""
    body: Dict[str, Any] = {}
    if task_id is not None:
        body["task_id"] = task_id
    if sample is not None:
        body["sample"] = bool(sample)
    if seed is not None:
        body["seed"] = int(seed)
    return body


def _error_message(raw: bytes, fallback: str) -> str:
    """The `error` of a JSON error body; else the body's text; else `fallback`."""
    text = raw.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:2000] or fallback
    if isinstance(data, Mapping) and data.get("error") is not None:
        return str(data["error"])
    return text[:2000] or fallback


class _Tools:
    """The tools as methods, for a client that has `step(action, session_id=, timeout=)`."""

    timeout: Optional[float]

    def step(
        self,
        action: Mapping[str, Any],
        session_id: Optional[str] = None,
        *,
        timeout: Optional[float] = None,
    ) -> StepResult:
        """Take one action (each client defines it)."""
        raise NotImplementedError

    def bash(
        self, command: str, timeout: Optional[float] = None, *, session_id: Optional[str] = None
    ) -> StepResult:
        """Run a shell command in the repository. `timeout`: the command's limit in seconds
        (the server's default is 60, its maximum 600). Observation: `output`, `exit_code`,
        `timed_out`."""
        wait = None
        if timeout is not None:
            # Whole seconds, as the contract counts them.
            timeout = int(math.ceil(timeout))
            if self.timeout is not None:
                wait = max(self.timeout, timeout + _TOOL_TIMEOUT_MARGIN)
        action = make_action("bash", command=command, timeout=timeout)
        return self.step(action, session_id, timeout=wait)

    def read_file(
        self,
        path: str,
        start: Optional[int] = None,
        end: Optional[int] = None,
        *,
        session_id: Optional[str] = None,
    ) -> StepResult:
        """Read a file (relative to the repository), optionally lines `start`..`end`
        (1-based). Observation: `content`, `lines`."""
        return self.step(make_action("read_file", path=path, start=start, end=end), session_id)

    def edit(
        self, path: str, old: str, new: str, *, session_id: Optional[str] = None
    ) -> StepResult:
        """Replace `old`, which must occur exactly once in the file, with `new`."""
        return self.step(make_action("edit", path=path, old=old, new=new), session_id)

    def write_file(
        self, path: str, content: str, *, session_id: Optional[str] = None
    ) -> StepResult:
        """Write a whole file."""
        return self.step(make_action("write_file", path=path, content=content), session_id)

    def run_tests(
        self, ids: Optional[Iterable[str]] = None, *, session_id: Optional[str] = None
    ) -> StepResult:
        """Run the given test ids (default: the task's tests present in the tree).
        Observation: `output`, `results` (id -> status)."""
        return self.step(
            make_action("run_tests", ids=None if ids is None else list(ids)), session_id
        )

    def submit(self, *, session_id: Optional[str] = None) -> StepResult:
        """Grade the change: the result holds the reward, `done` is true and `info` tells
        how the patch was graded."""
        return self.step(make_action("submit"), session_id)


class SweForgeEnv(_Tools):
    """A client of the HTTP endpoints.

    `base_url`: the server (`http://host:port`). `token`: the server's `--token`, sent as
    `Authorization: Bearer <token>`. `timeout`: seconds a call may wait (None: no limit).

    Every HTTP error raises `SweForgeError` with the status and the server's `error`; a tool
    error is not an HTTP error but an observation holding `error`. Environment proxy
    settings are not used: the server is reached directly. A client may be shared between
    threads when each call names its session; the remembered session is one per client.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        token: Optional[str] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
    ):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"not an http:// or https:// URL: {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        #: The session of the last `reset` (None before the first).
        self.session_id: Optional[str] = None
        #: The task of the last `reset`.
        self.task_id: Optional[str] = None
        #: Whether the last session's episode is over (its last step result said `done`).
        self.done = False
        self._opener = build_opener(ProxyHandler({}))

    def __repr__(self) -> str:
        return f"SweForgeEnv({self.base_url!r}, session_id={self.session_id!r})"

    # -- transport ----------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Optional[Mapping[str, Any]] = None,
        *,
        query: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
        accept: str = "application/json",
        parse_json: bool = True,
    ) -> Any:
        """One HTTP request; the answer's JSON (or its text with `parse_json=False`).

        Raises `SweForgeError`: with the status and the server's `error` on a 4xx or 5xx,
        without a status when the server cannot be reached or does not answer in time.
        """
        url = self.base_url + path
        if query:
            url += "?" + urlencode({k: v for k, v in query.items() if v is not None})
        headers = {"Accept": accept, "User-Agent": _USER_AGENT}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        req = Request(url, data=data, headers=headers, method=method)
        wait = timeout if timeout is not None else self.timeout
        try:
            with self._opener.open(req, timeout=wait) as resp:
                status = resp.status
                raw = resp.read()
        except HTTPError as e:
            try:
                raw = e.read() if e.fp is not None else b""
            except (OSError, http.client.HTTPException):
                raw = b""
            raise SweForgeError(
                _error_message(raw, e.reason or "no reason given"),
                status=e.code,
                body=raw.decode("utf-8", "replace"),
            ) from None
        except (URLError, OSError, http.client.HTTPException) as e:
            reason = getattr(e, "reason", None) or e
            if isinstance(reason, socket.timeout) or isinstance(e, socket.timeout):
                reason = f"no answer within {wait} seconds"
            raise SweForgeError(f"{method} {url}: {reason}") from e
        text = raw.decode("utf-8", "replace")
        if not parse_json:
            return text
        try:
            return json.loads(text)
        except ValueError:
            raise SweForgeError(
                f"{method} {url}: the answer is not JSON: {text[:300]!r}", status=status, body=text
            ) from None

    def _session(self, session_id: Optional[str]) -> str:
        sid = session_id if session_id is not None else self.session_id
        if sid is None:
            raise SweForgeError("no session: call reset() first, or pass session_id")
        return sid

    def _remember(self, result: StepResult) -> None:
        sid = result.observation.get("session_id", result.info.get("session_id"))
        if sid is not None:
            self.session_id = str(sid)
        tid = result.observation.get("task_id", result.info.get("task_id"))
        self.task_id = None if tid is None else str(tid)
        self.done = result.done

    # -- the environment ------------------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        """`{"status": "ok", "sessions": n, "tasks": n}` (needs no token)."""
        return self.request("GET", "/health")

    def schema(self) -> Dict[str, Any]:
        """`{"action": <JSON schema>, "tools": [<OpenAI function schemas>], "observation": ...}`."""
        return self.request("GET", "/schema")

    def reset(
        self,
        task_id: Optional[str] = None,
        sample: Optional[bool] = None,
        seed: Optional[int] = None,
    ) -> StepResult:
        """Start a session: on task `task_id`, or on a task the curriculum draws (`sample`,
        with `seed` for a reproducible draw; nothing given: a draw too). The observation holds
        `instruction`, `tools`, `session_id` and `task_id`; the session is remembered."""
        result = StepResult.from_dict(
            self.request("POST", "/reset", _reset_body(task_id, sample, seed))
        )
        self._remember(result)
        return result

    def step(
        self,
        action: Mapping[str, Any],
        session_id: Optional[str] = None,
        *,
        timeout: Optional[float] = None,
    ) -> StepResult:
        """Take an action `{"tool": ..., "arguments": {...}}` (the OpenAI tool-call shapes
        are read by the server too) in the session (default: the last reset's)."""
        sid = self._session(session_id)
        result = StepResult.from_dict(
            self.request("POST", "/step", {"session_id": sid, "action": action}, timeout=timeout)
        )
        if sid == self.session_id:
            self.done = result.done
        return result

    def state(self, session_id: Optional[str] = None) -> Dict[str, Any]:
        """The session's state: `session_id`, `task_id`, `status` (active, submitted, closed,
        timed-out, failed), `steps`, `reward`, `created_at`, `ended_at`, `detail`."""
        return self.request("GET", "/state", query={"session_id": self._session(session_id)})

    def close(self, session_id: Optional[str] = None) -> Dict[str, Any]:
        """End the session (its container goes); answers its final state."""
        sid = self._session(session_id)
        state = self.request("POST", "/close", {"session_id": sid})
        if sid == self.session_id:
            self.done = True
        return state

    def curriculum(self) -> Dict[str, Any]:
        """Bucket pass rates, per-task pass rates and the generation plan."""
        return self.request("GET", "/curriculum")

    def metrics(self, prometheus: bool = False) -> Union[Dict[str, Any], str]:
        """The server's metrics: JSON, or with `prometheus=True` the Prometheus text."""
        if prometheus:
            return self.request(
                "GET",
                "/metrics",
                query={"format": "prometheus"},
                accept="text/plain",
                parse_json=False,
            )
        return self.request("GET", "/metrics")

    # -- context manager: the last session is closed on the way out --------------------------

    def __enter__(self) -> "SweForgeEnv":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.session_id is not None and not self.done:
            try:
                self.close()
            except SweForgeError:
                pass


class SweForgeWsEnv(_Tools):
    """The same environment over one WebSocket connection (`GET /ws`).

    Connects on first use (or `connect()`); `close()` ends a session, `disconnect()` the
    connection (a `with` block does both). A connection that fails in the middle of a call is
    dropped, and the next call opens a new one; sessions outlive connections, as the client
    names its session in each message. Not thread-safe: one call at a time.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        token: Optional[str] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
    ):
        parts = urlsplit(base_url)
        schemes = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
        if parts.scheme not in schemes or not parts.netloc:
            raise ValueError(f"not an http(s):// or ws(s):// URL: {base_url!r}")
        path = parts.path.rstrip("/")
        if not path.endswith("/ws"):
            path += "/ws"
        self.url = urlunsplit((schemes[parts.scheme], parts.netloc, path, "", ""))
        self.token = token
        self.timeout = timeout
        self.session_id: Optional[str] = None
        self.task_id: Optional[str] = None
        self.done = False
        self._ws: Optional[WebSocket] = None

    def __repr__(self) -> str:
        return f"SweForgeWsEnv({self.url!r}, session_id={self.session_id!r})"

    # -- transport ----------------------------------------------------------------------------

    def connect(self) -> None:
        """Open the connection (a no-op when open). A refused handshake raises
        `SweForgeError` with its HTTP status (401 without the token)."""
        if self._ws is not None:
            return
        headers = {"User-Agent": _USER_AGENT}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            self._ws = WebSocket.connect(self.url, headers=headers, timeout=self.timeout)
        except WebSocketHandshakeError as e:
            raise SweForgeError(
                _error_message(e.body, e.reason or "handshake refused"),
                status=e.status,
                body=e.body.decode("utf-8", "replace"),
            ) from None
        except (WebSocketError, OSError) as e:
            raise SweForgeError(f"connecting to {self.url}: {e}") from e

    def disconnect(self) -> None:
        """Close the connection (the closing handshake); the sessions stay as they are."""
        ws, self._ws = self._ws, None
        if ws is not None:
            ws.close()

    def call(
        self, kind: str, data: Mapping[str, Any], *, timeout: Optional[float] = None
    ) -> Dict[str, Any]:
        """Send `{"type": kind, "data": data}` and return the answer (`{"type", "data"}`).

        An `error` answer raises `SweForgeError` (with `data["status"]` as its status when the
        server gives one); a broken connection raises `SweForgeError` without a status.
        """
        self.connect()
        ws = self._ws
        assert ws is not None
        try:
            ws.settimeout(timeout if timeout is not None else self.timeout)
            ws.send_text(json.dumps({"type": kind, "data": dict(data)}))
            text = ws.recv_text()
        except (WebSocketError, OSError) as e:
            # The answer may still be on its way: this connection's state is unknown.
            self._ws = None
            ws.close(timeout=1.0)
            if isinstance(e, socket.timeout):
                reason = f"no answer within {timeout or self.timeout} seconds"
            else:
                reason = str(e)
            raise SweForgeError(f"{kind} over {self.url}: {reason}") from e
        try:
            answer = json.loads(text)
        except ValueError:
            raise SweForgeError(
                f"{kind}: the answer is not JSON: {text[:300]!r}", body=text
            ) from None
        if not isinstance(answer, Mapping) or "type" not in answer:
            raise SweForgeError(f"{kind}: not a message: {text[:300]!r}", body=text)
        payload = answer.get("data")
        if answer["type"] == "error":
            err = payload if isinstance(payload, Mapping) else {"error": payload}
            status = err.get("status")
            raise SweForgeError(
                str(err.get("error", "the server answered an error")),
                status=status if isinstance(status, int) else None,
                body=text,
            )
        return {"type": answer["type"], "data": payload}

    def _result(
        self, kind: str, data: Mapping[str, Any], timeout: Optional[float] = None
    ) -> StepResult:
        answer = self.call(kind, data, timeout=timeout)
        if answer["type"] != "result":
            raise SweForgeError(f"{kind}: expected a result, got {answer['type']!r}")
        return StepResult.from_dict(answer["data"])

    def _state(self, kind: str, data: Mapping[str, Any]) -> Dict[str, Any]:
        answer = self.call(kind, data)
        if answer["type"] != "state" or not isinstance(answer["data"], Mapping):
            raise SweForgeError(f"{kind}: expected a state, got {answer['type']!r}")
        return dict(answer["data"])

    def _sid(self, session_id: Optional[str]) -> Dict[str, Any]:
        """`{"session_id": …}` for the session named or remembered (empty when neither: the
        server then takes the connection's last session)."""
        sid = session_id if session_id is not None else self.session_id
        return {} if sid is None else {"session_id": sid}

    # -- the environment ------------------------------------------------------------------------

    def reset(
        self,
        task_id: Optional[str] = None,
        sample: Optional[bool] = None,
        seed: Optional[int] = None,
    ) -> StepResult:
        """As `SweForgeEnv.reset`."""
        result = self._result("reset", _reset_body(task_id, sample, seed))
        sid = result.observation.get("session_id", result.info.get("session_id"))
        self.session_id = None if sid is None else str(sid)
        tid = result.observation.get("task_id", result.info.get("task_id"))
        self.task_id = None if tid is None else str(tid)
        self.done = result.done
        return result

    def step(
        self,
        action: Mapping[str, Any],
        session_id: Optional[str] = None,
        *,
        timeout: Optional[float] = None,
    ) -> StepResult:
        """As `SweForgeEnv.step`."""
        data = self._sid(session_id)
        data["action"] = action
        result = self._result("step", data, timeout)
        if data.get("session_id") == self.session_id:
            self.done = result.done
        return result

    def state(self, session_id: Optional[str] = None) -> Dict[str, Any]:
        """As `SweForgeEnv.state`."""
        return self._state("state", self._sid(session_id))

    def close(self, session_id: Optional[str] = None) -> Dict[str, Any]:
        """End the session (not the connection: see `disconnect`); answers its final state."""
        data = self._sid(session_id)
        state = self._state("close", data)
        if data.get("session_id") == self.session_id:
            self.done = True
        return state

    def __enter__(self) -> "SweForgeWsEnv":
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            if self.session_id is not None and not self.done:
                self.close()
        except SweForgeError:
            pass
        finally:
            self.disconnect()
