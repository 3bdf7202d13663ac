"""Tests that need no swe-forge server: reading tool calls out of text, the WebSocket frame
codec and connection, and the clients' mechanics against a small stand-in server on loopback
(status codes and `error` messages, the bearer token, the remembered session, the adapters).

The stand-in answers as docs/serve.md says; the real server is tested in test_client.py.
"""

from __future__ import annotations

import io
import json
import socket
import struct
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from swe_forge_client import (  # noqa: E402
    TOOL_NAMES,
    StepResult,
    SweForgeEnv,
    SweForgeError,
    SweForgeWsEnv,
    ToolCallError,
    format_observation,
    normalize_action,
    normalize_actions,
    parse_tool_call,
)
from swe_forge_client.adapters.rllm import SweForgeRLLMEnv  # noqa: E402
from swe_forge_client.adapters.skyrl import SweForgeSkyRLEnv  # noqa: E402
from swe_forge_client.websocket import (  # noqa: E402
    OP_BINARY,
    OP_CLOSE,
    OP_CONTINUATION,
    OP_PING,
    OP_PONG,
    OP_TEXT,
    WebSocket,
    WebSocketClosed,
    WebSocketError,
    accept_key,
    encode_frame,
    read_frame,
)


def reader(data: bytes):
    """A `read_exact` over bytes."""
    stream = io.BytesIO(data)

    def read_exact(n: int) -> bytes:
        out = stream.read(n)
        if len(out) != n:
            raise EOFError(f"wanted {n} bytes, {len(out)} left")
        return out

    return read_exact


# -- tool calls ---------------------------------------------------------------------------------


class ParseToolCallTests(unittest.TestCase):
    BASH = {"tool": "bash", "arguments": {"command": "ls -la"}}

    def test_plain_json(self):
        self.assertEqual(
            parse_tool_call('{"tool": "bash", "arguments": {"command": "ls -la"}}'), self.BASH
        )

    def test_openai_shapes(self):
        args = json.dumps({"command": "ls -la"})
        for shape in (
            {"name": "bash", "arguments": args},
            {"name": "bash", "arguments": {"command": "ls -la"}},
            {"name": "bash", "parameters": {"command": "ls -la"}},
            {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": args}},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"type": "function", "function": {"name": "bash", "arguments": args}}
                ],
            },
        ):
            with self.subTest(shape=shape):
                self.assertEqual(parse_tool_call(json.dumps(shape)), self.BASH)
                self.assertEqual(normalize_action(shape), self.BASH)

    def test_fenced_block_in_prose(self):
        text = 'Let me look around first.\n\n```json\n{"tool": "bash", "arguments": {"command": "ls -la"}}\n```\nThen I will read.'
        self.assertEqual(parse_tool_call(text), self.BASH)
        # A fence with no language tag.
        self.assertEqual(
            parse_tool_call('```\n{"tool": "bash", "arguments": {"command": "ls -la"}}\n```'),
            self.BASH,
        )

    def test_tool_call_tags(self):
        text = '<think>list</think>\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls -la"}}\n</tool_call>'
        self.assertEqual(parse_tool_call(text), self.BASH)

    def test_bare_object_in_prose(self):
        text = 'I will run {"tool": "bash", "arguments": {"command": "ls -la"}} now.'
        self.assertEqual(parse_tool_call(text), self.BASH)

    def test_braces_inside_strings_and_nested_objects(self):
        content = 'def f():\n    return {"a": [1, 2]}  # } ``` {\n'
        call = {"tool": "write_file", "arguments": {"path": "m.py", "content": content}}
        text = "Writing it:\n```json\n" + json.dumps(call) + "\n```"
        self.assertEqual(parse_tool_call(text), call)
        self.assertEqual(parse_tool_call("prose { not json } then " + json.dumps(call)), call)

    def test_first_call_wins(self):
        text = '{"tool": "bash", "arguments": {"command": "ls -la"}}\n{"tool": "submit", "arguments": {}}'
        self.assertEqual(parse_tool_call(text), self.BASH)

    def test_submit_without_arguments(self):
        self.assertEqual(parse_tool_call('{"tool": "submit"}'), {"tool": "submit", "arguments": {}})
        self.assertEqual(
            parse_tool_call('{"name": "submit", "arguments": ""}'),
            {"tool": "submit", "arguments": {}},
        )

    def test_no_tool_call(self):
        for text in (
            "",
            "I think the bug is in add().",
            "```python\nprint(1)\n```",
            '{"answer": 42}',
            "[1, 2]",
            "{broken",
        ):
            with self.subTest(text=text):
                with self.assertRaises(ToolCallError) as caught:
                    parse_tool_call(text)
                self.assertIn('{"tool": "<name>"', str(caught.exception))

    def test_bad_arguments(self):
        with self.assertRaises(ToolCallError):
            parse_tool_call('{"name": "bash", "arguments": "{not json"}')
        with self.assertRaises(ToolCallError):
            normalize_action({"tool": "bash", "arguments": [1, 2]})
        with self.assertRaises(ToolCallError):
            normalize_action({"tool": "", "arguments": {}})

    def test_several_calls(self):
        calls = [
            {"tool": "bash", "arguments": {"command": "ls"}},
            {"function": {"name": "submit", "arguments": "{}"}},
        ]
        self.assertEqual([c["tool"] for c in normalize_actions(calls)], ["bash", "submit"])
        with self.assertRaises(ToolCallError):
            normalize_action(calls)
        with self.assertRaises(ToolCallError):
            normalize_actions([])


class FormatObservationTests(unittest.TestCase):
    def test_shapes(self):
        self.assertEqual(format_observation({"error": "no such file: x"}), "error: no such file: x")
        self.assertEqual(
            format_observation({"output": "a\n", "exit_code": 0, "timed_out": False}),
            "a\n[exit code 0]",
        )
        self.assertEqual(
            format_observation({"output": "", "exit_code": 124, "timed_out": True}),
            "[exit code 124, timed out]",
        )
        self.assertEqual(format_observation({"content": "x = 1\n", "lines": 1}), "x = 1\n")
        self.assertEqual(format_observation({"ok": True}), "ok")
        self.assertEqual(
            format_observation(
                {"output": "1 failed", "results": {"t::a": "PASSED", "t::b": "FAILED"}}
            ),
            "1 failed\nt::a: PASSED\nt::b: FAILED",
        )
        self.assertEqual(json.loads(format_observation({"other": 1})), {"other": 1})


class StepResultTests(unittest.TestCase):
    def test_from_dict(self):
        r = StepResult.from_dict(
            {"observation": {"error": "x"}, "reward": 1, "done": True, "info": {"a": 1}}
        )
        self.assertEqual((r.reward, r.done, r.error, r.info), (1.0, True, "x", {"a": 1}))
        self.assertIsInstance(r.reward, float)
        self.assertIsNone(
            StepResult.from_dict({"observation": {}, "reward": None, "done": False}).reward
        )
        with self.assertRaises(SweForgeError):
            StepResult.from_dict({"reward": 0})


# -- WebSocket frames -----------------------------------------------------------------------------


class FrameCodecTests(unittest.TestCase):
    def test_rfc6455_examples(self):
        # RFC 6455 section 5.7: "Hello", unmasked and masked with 37 fa 21 3d.
        self.assertEqual(
            encode_frame(OP_TEXT, b"Hello", mask=False), bytes.fromhex("810548656c6c6f")
        )
        masked = encode_frame(OP_TEXT, b"Hello", mask_key=bytes.fromhex("37fa213d"))
        self.assertEqual(masked, bytes.fromhex("818537fa213d7f9f4d5158"))
        frame = read_frame(reader(masked))
        self.assertEqual((frame.fin, frame.opcode, frame.payload), (True, OP_TEXT, b"Hello"))
        # A fragmented unmasked text message: "Hel", then "lo".
        first = read_frame(reader(bytes.fromhex("010348656c")))
        second = read_frame(reader(bytes.fromhex("80026c6f")))
        self.assertEqual(
            (first.fin, first.opcode, second.fin, second.opcode),
            (False, OP_TEXT, True, OP_CONTINUATION),
        )
        # An unmasked ping with "Hello".
        self.assertEqual(read_frame(reader(bytes.fromhex("890548656c6c6f"))).opcode, OP_PING)

    def test_accept_key(self):
        # RFC 6455 section 1.3.
        self.assertEqual(accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")

    def test_length_encodings(self):
        key = b"\x01\x02\x03\x04"
        for n, head_len, marker in (
            (0, 2, 0),
            (125, 2, 125),
            (126, 4, 126),
            (65535, 4, 126),
            (65536, 10, 127),
            (70000, 10, 127),
        ):
            with self.subTest(n=n):
                payload = bytes(i % 251 for i in range(n))
                data = encode_frame(OP_BINARY, payload, mask_key=key)
                self.assertEqual(data[0], 0x80 | OP_BINARY)
                self.assertEqual(data[1] & 0x80, 0x80, "a client frame is masked")
                self.assertEqual(data[1] & 0x7F, marker)
                if marker == 126:
                    self.assertEqual(struct.unpack("!H", data[2:4])[0], n)
                elif marker == 127:
                    self.assertEqual(struct.unpack("!Q", data[2:10])[0], n)
                self.assertEqual(data[head_len : head_len + 4], key)
                self.assertEqual(len(data), head_len + 4 + n)
                if n:
                    self.assertNotEqual(data[head_len + 4 :], payload, "the payload is masked")
                frame = read_frame(reader(data))
                self.assertEqual(frame.payload, payload)
                # The server's (unmasked) frame of the same length.
                plain = encode_frame(OP_BINARY, payload, mask=False)
                self.assertEqual(len(plain), head_len + n)
                self.assertEqual(read_frame(reader(plain)).payload, payload)

    def test_random_mask_round_trip(self):
        payload = "ünïcödé ✓".encode("utf-8") * 50
        a, b = encode_frame(OP_TEXT, payload), encode_frame(OP_TEXT, payload)
        self.assertEqual(read_frame(reader(a)).payload, payload)
        self.assertEqual(read_frame(reader(b)).payload, payload)

    def test_protocol_errors(self):
        with self.assertRaises(WebSocketError):  # reserved bits
            read_frame(reader(bytes([0xC1, 0x00])))
        with self.assertRaises(WebSocketError):  # unknown opcode
            read_frame(reader(bytes([0x83, 0x00])))
        with self.assertRaises(WebSocketError):  # control frame over 125 bytes
            read_frame(reader(bytes([0x89, 126, 0, 126]) + b"x" * 126))
        with self.assertRaises(WebSocketError):  # fragmented control frame
            read_frame(reader(bytes([0x09, 0x00])))
        with self.assertRaises(WebSocketError):  # over the size limit
            read_frame(reader(encode_frame(OP_TEXT, b"x" * 200, mask=False)), max_size=100)
        with self.assertRaises(ValueError):
            encode_frame(OP_PING, b"x" * 126)
        with self.assertRaises(ValueError):
            encode_frame(OP_TEXT, b"x", mask_key=b"abc")


class WebSocketConnectionTests(unittest.TestCase):
    """A `WebSocket` over a socket pair, the test playing the server."""

    def setUp(self):
        self.client_sock, self.server_sock = socket.socketpair()
        self.client_sock.settimeout(5)
        self.server_sock.settimeout(5)
        self.ws = WebSocket(self.client_sock)
        self.addCleanup(self.server_sock.close)
        self.addCleanup(self.client_sock.close)

    def server_read(self):
        def read_exact(n):
            out = b""
            while len(out) < n:
                chunk = self.server_sock.recv(n - len(out))
                if not chunk:
                    raise EOFError
                out += chunk
            return out

        return read_frame(read_exact)

    def test_send_text_is_one_masked_frame(self):
        self.ws.send_text('{"type": "state"}')
        frame = self.server_read()
        self.assertEqual(
            (frame.fin, frame.opcode, frame.payload), (True, OP_TEXT, b'{"type": "state"}')
        )

    def test_ping_is_answered_and_fragments_joined(self):
        self.server_sock.sendall(
            encode_frame(OP_PING, b"are you there", mask=False)
            + encode_frame(OP_TEXT, "héllo ".encode(), fin=False, mask=False)
            + encode_frame(OP_PONG, b"", mask=False)
            + encode_frame(OP_CONTINUATION, b"world", mask=False)
        )
        self.assertEqual(self.ws.recv_text(), "héllo world")
        pong = self.server_read()
        self.assertEqual((pong.opcode, pong.payload), (OP_PONG, b"are you there"))

    def test_close_from_the_server_is_echoed(self):
        self.server_sock.sendall(
            encode_frame(OP_CLOSE, struct.pack("!H", 1001) + b"going away", mask=False)
        )
        with self.assertRaises(WebSocketClosed) as caught:
            self.ws.recv_text()
        self.assertEqual((caught.exception.code, caught.exception.reason), (1001, "going away"))
        echo = self.server_read()
        self.assertEqual((echo.opcode, struct.unpack("!H", echo.payload[:2])[0]), (OP_CLOSE, 1001))
        with self.assertRaises(WebSocketClosed):
            self.ws.send_text("late")

    def test_close_handshake_from_the_client(self):
        self.server_sock.sendall(encode_frame(OP_CLOSE, struct.pack("!H", 1000), mask=False))
        self.ws.close()
        frame = self.server_read()
        self.assertEqual((frame.opcode, struct.unpack("!H", frame.payload)[0]), (OP_CLOSE, 1000))

    def test_cut_connection(self):
        self.server_sock.close()
        with self.assertRaises(WebSocketClosed):
            self.ws.recv_text()


# -- the clients against a stand-in server --------------------------------------------------------


class StandIn:
    """A few of docs/serve.md's answers, enough for the clients' mechanics."""

    TASK = "demo-0001"
    INSTRUCTION = "add() returns the wrong sum for negative numbers."

    def __init__(self, token=None):
        self.token = token
        self.sessions = {}
        self.requests = []  # (method, path, headers, body)
        self.pongs = []
        self.lock = threading.Lock()

    def tools(self):
        return [
            {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
            for n in TOOL_NAMES
        ]

    def result(self, observation, reward=None, done=False, info=None):
        return {"observation": observation, "reward": reward, "done": done, "info": info or {}}

    def dispatch(self, kind, data):
        """(answer type, answer data) or raises (status, message)."""
        if kind == "reset":
            task = data.get("task_id", self.TASK)
            if task != self.TASK:
                raise Refusal(404, f"no task {task!r}")
            with self.lock:
                sid = f"s{len(self.sessions) + 1}"
                self.sessions[sid] = {
                    "session_id": sid,
                    "task_id": task,
                    "status": "active",
                    "steps": 0,
                    "reward": None,
                }
            obs = {
                "instruction": self.INSTRUCTION,
                "tools": self.tools(),
                "session_id": sid,
                "task_id": task,
            }
            return "result", self.result(obs)
        session = self.sessions.get(data.get("session_id"))
        if session is None:
            raise Refusal(404, f"no session {data.get('session_id')!r}")
        if kind == "state":
            return "state", session
        if kind == "close":
            session["status"] = "closed"
            return "state", session
        action = data.get("action") or {}
        if session["status"] != "active":
            raise Refusal(409, f"the session is {session['status']}")
        session["steps"] += 1
        tool, args = action.get("tool"), action.get("arguments") or {}
        if tool == "bash":
            return "result", self.result(
                {"output": f"ran: {args.get('command')}\n", "exit_code": 0, "timed_out": False}
            )
        if tool == "read_file":
            return "result", self.result({"error": f"no such file: {args.get('path')}"})
        if tool == "submit":
            session.update(status="submitted", reward=0.0)
            return "result", self.result(
                {"reward": 0.0}, reward=0.0, done=True, info={"failure_type": "empty-patch"}
            )
        return "result", self.result({"error": f"unknown tool {tool!r}"})


class Refusal(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    standin: StandIn

    def log_message(self, *args):
        pass

    def reply(self, status, payload, content_type="application/json"):
        body = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_request(self, method):
        s = self.standin
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        s.requests.append((method, url.path, dict(self.headers), body))
        if (
            url.path != "/health"
            and s.token
            and self.headers.get("Authorization") != f"Bearer {s.token}"
        ):
            return self.reply(401, {"error": "a bearer token is needed"})
        if url.path == "/ws":
            return self.websocket()
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        try:
            if (method, url.path) == ("GET", "/health"):
                return self.reply(200, {"status": "ok", "sessions": len(s.sessions), "tasks": 1})
            if (method, url.path) == ("GET", "/schema"):
                return self.reply(200, {"action": {}, "tools": s.tools(), "observation": {}})
            if (method, url.path) == ("GET", "/metrics"):
                if query.get("format") == "prometheus":
                    return self.reply(200, "swe_forge_sessions 1\n", "text/plain; version=0.0.4")
                return self.reply(200, {"sessions": len(s.sessions)})
            if (method, url.path) == ("GET", "/state"):
                return self.reply(200, s.dispatch("state", query)[1])
            routes = {"/reset": "reset", "/step": "step", "/close": "close"}
            if method == "POST" and url.path in routes:
                return self.reply(200, s.dispatch(routes[url.path], body or {})[1])
            return self.reply(404, {"error": f"no route {method} {url.path}"})
        except Refusal as r:
            return self.reply(r.status, {"error": r.message})

    def do_GET(self):
        self.handle_request("GET")

    def do_POST(self):
        self.handle_request("POST")

    def websocket(self):
        key = self.headers.get("Sec-WebSocket-Key", "")
        self.send_response(101, "Switching Protocols")
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept_key(key))
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True

        def read_exact(n):
            data = self.rfile.read(n)
            if len(data) != n:
                raise EOFError
            return data

        def send(opcode, payload, fin=True):
            self.wfile.write(encode_frame(opcode, payload, fin=fin, mask=False))
            self.wfile.flush()

        last = None
        while True:
            frame = read_frame(read_exact)
            if frame.opcode == OP_CLOSE:
                send(OP_CLOSE, frame.payload[:2])
                return
            if frame.opcode == OP_PONG:
                self.standin.pongs.append(frame.payload)
                continue
            message = json.loads(frame.payload)
            data = dict(message.get("data") or {})
            if message["type"] in ("step", "state") and "session_id" not in data:
                data["session_id"] = last
            try:
                kind, answer = self.standin.dispatch(message["type"], data)
                if message["type"] == "reset":
                    last = answer["observation"]["session_id"]
                text = json.dumps({"type": kind, "data": answer}).encode()
            except Refusal as r:
                text = json.dumps({"type": "error", "data": {"error": r.message}}).encode()
            # A ping first, and the answer in two fragments: the client must cope with both.
            send(OP_PING, b"beat")
            half = len(text) // 2
            send(OP_TEXT, text[:half], fin=False)
            send(OP_CONTINUATION, text[half:])


class StandInTestCase(unittest.TestCase):
    token = None

    def setUp(self):
        self.standin = StandIn(self.token)
        handler = type("BoundHandler", (Handler,), {"standin": self.standin})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()
        self.addCleanup(thread.join, 5)
        self.addCleanup(self.httpd.server_close)
        self.addCleanup(self.httpd.shutdown)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


class HttpClientTests(StandInTestCase):
    def test_episode(self):
        env = SweForgeEnv(self.url, timeout=10)
        self.assertEqual(env.health()["status"], "ok")
        with self.assertRaises(SweForgeError):
            env.step({"tool": "bash", "arguments": {"command": "ls"}})  # no session yet
        result = env.reset(task_id=StandIn.TASK)
        self.assertEqual(env.session_id, "s1")
        self.assertEqual(env.task_id, StandIn.TASK)
        self.assertEqual(result.observation["instruction"], StandIn.INSTRUCTION)
        self.assertEqual(self.standin.requests[-1][3], {"task_id": StandIn.TASK})
        self.assertEqual(env.bash("ls", timeout=5).observation["exit_code"], 0)
        self.assertEqual(
            self.standin.requests[-1][3],
            {
                "session_id": "s1",
                "action": {"tool": "bash", "arguments": {"command": "ls", "timeout": 5}},
            },
        )
        env.read_file("a.py", start=3)
        self.assertEqual(
            self.standin.requests[-1][3]["action"],
            {"tool": "read_file", "arguments": {"path": "a.py", "start": 3}},
        )
        self.assertEqual(env.state()["status"], "active")
        done = env.submit()
        self.assertEqual((done.reward, done.done), (0.0, True))
        self.assertTrue(env.done)
        self.assertEqual(env.state("s1")["status"], "submitted")
        self.assertEqual(env.close()["status"], "closed")
        self.assertEqual(env.metrics(prometheus=True), "swe_forge_sessions 1\n")
        self.assertEqual(self.standin.requests[-1][2].get("Accept"), "text/plain")
        self.assertEqual(env.metrics(), {"sessions": 1})

    def test_reset_body(self):
        env = SweForgeEnv(self.url, timeout=10)
        env.reset()
        self.assertEqual(self.standin.requests[-1][3], {})
        env.reset(sample=True, seed=7)
        self.assertEqual(self.standin.requests[-1][3], {"sample": True, "seed": 7})

    def test_errors_carry_status_and_message(self):
        env = SweForgeEnv(self.url, timeout=10)
        with self.assertRaises(SweForgeError) as caught:
            env.reset(task_id="nope")
        self.assertEqual(
            (caught.exception.status, caught.exception.message), (404, "no task 'nope'")
        )
        with self.assertRaises(SweForgeError) as caught:
            env.state("s404")
        self.assertEqual(caught.exception.status, 404)

    def test_unreachable_server(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with self.assertRaises(SweForgeError) as caught:
            SweForgeEnv(f"http://127.0.0.1:{port}", timeout=5).health()
        self.assertIsNone(caught.exception.status)

    def test_context_manager_closes_the_session(self):
        with SweForgeEnv(self.url, timeout=10) as env:
            env.reset()
        self.assertEqual(self.standin.sessions["s1"]["status"], "closed")


class TokenClientTests(StandInTestCase):
    token = "sekrit"

    def test_bearer_token(self):
        self.assertEqual(SweForgeEnv(self.url, timeout=10).health()["status"], "ok")
        with self.assertRaises(SweForgeError) as caught:
            SweForgeEnv(self.url, timeout=10).schema()
        self.assertEqual(
            (caught.exception.status, caught.exception.message), (401, "a bearer token is needed")
        )
        env = SweForgeEnv(self.url, token="sekrit", timeout=10)
        self.assertIn("tools", env.schema())
        self.assertEqual(self.standin.requests[-1][2].get("Authorization"), "Bearer sekrit")

    def test_websocket_handshake_refused(self):
        with self.assertRaises(SweForgeError) as caught:
            SweForgeWsEnv(self.url, timeout=10).connect()
        self.assertEqual(
            (caught.exception.status, caught.exception.message), (401, "a bearer token is needed")
        )
        with SweForgeWsEnv(self.url, token="sekrit", timeout=10) as env:
            self.assertEqual(env.reset().observation["session_id"], "s1")


class WsClientTests(StandInTestCase):
    def test_episode(self):
        with SweForgeWsEnv(self.url, timeout=10) as env:
            self.assertTrue(env.url.endswith("/ws") and env.url.startswith("ws://"))
            result = env.reset(task_id=StandIn.TASK)
            self.assertEqual(env.session_id, "s1")
            self.assertEqual(result.observation["instruction"], StandIn.INSTRUCTION)
            self.assertEqual(env.bash("ls").observation["output"], "ran: ls\n")
            self.assertIsNotNone(env.read_file("missing").error)
            self.assertEqual(env.state()["steps"], 2)
            with self.assertRaises(SweForgeError) as caught:
                env.state("s404")
            self.assertEqual(caught.exception.message, "no session 's404'")
            self.assertEqual(env.close()["status"], "closed")
        self.assertEqual(self.standin.pongs[:1], [b"beat"])

    def test_reconnects_after_a_disconnect(self):
        env = SweForgeWsEnv(self.url, timeout=10)
        env.reset()
        env.disconnect()
        self.assertEqual(env.bash("pwd").observation["exit_code"], 0)  # names its session
        env.disconnect()


class RLLMAdapterOfflineTests(StandInTestCase):
    def test_round_trip(self):
        env = SweForgeRLLMEnv.from_dict(
            {"base_url": self.url, "task_id": StandIn.TASK, "timeout": 10}
        )
        env.idx = 3
        self.assertEqual(env.idx, 3)
        obs, info = env.reset()
        self.assertEqual((obs["instruction"], info["session_id"]), (StandIn.INSTRUCTION, "s1"))

        class Action:  # rLLM's Action: the call in `.action`
            action = {
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command": "ls"}'},
            }

        obs, reward, done, info = env.step(Action())
        self.assertEqual(
            (obs["output"], reward, done, info["tool"]), ("ran: ls\n", 0.0, False, "bash")
        )
        obs, reward, done, _ = env.step(
            '{"name": "bash", "arguments": "{\\"command\\": \\"pwd\\"}"}'
        )
        self.assertEqual(obs["output"], "ran: pwd\n")
        obs, reward, done, info = env.step("no call here")
        self.assertIn("error", obs)
        self.assertTrue(info["parse_error"])
        obs, _, _, _ = env.step(
            [
                {"tool": "bash", "arguments": {"command": "a"}},
                {"tool": "bash", "arguments": {"command": "b"}},
            ]
        )
        self.assertEqual(
            [r["observation"]["output"] for r in obs["results"]], ["ran: a\n", "ran: b\n"]
        )
        self.assertEqual(env.compute_final_reward(), 0.0)
        self.assertEqual(self.standin.sessions["s1"]["status"], "submitted")
        self.assertEqual(env.compute_final_reward(), 0.0)  # no second submit
        self.assertEqual(self.standin.sessions["s1"]["steps"], 5)
        env.close()


class SkyRLAdapterOfflineTests(StandInTestCase):
    def test_episode_and_max_turns(self):
        env = SweForgeSkyRLEnv(
            {"base_url": self.url, "timeout": 10, "max_turns": 3},
            {"extra_info": {"task_id": StandIn.TASK}},
        )
        messages, metadata = env.init([{"role": "user", "content": "dataset prompt"}])
        self.assertEqual(messages[1], {"role": "user", "content": StandIn.INSTRUCTION})
        self.assertEqual(metadata["task_id"], StandIn.TASK)
        for name in TOOL_NAMES:
            self.assertIn(f'"{name}"', messages[0]["content"])
        out = env.step('<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>')
        self.assertEqual(
            out["observations"], [{"role": "user", "content": "ran: ls\n[exit code 0]"}]
        )
        self.assertEqual((out["reward"], out["done"]), (0.0, False))
        out = env.step("nothing to run")
        self.assertTrue(out["observations"][0]["content"].startswith("error: no tool call"))
        self.assertFalse(out["done"])
        out = env.step(
            '{"tool": "read_file", "arguments": {"path": "x"}}'
        )  # the third turn: submitted for the model
        self.assertEqual((out["done"], out["reward"], out["observations"]), (True, 0.0, []))
        self.assertTrue(out["metadata"]["truncated"])
        self.assertEqual(out["metadata"]["info"]["failure_type"], "empty-patch")
        self.assertEqual(self.standin.sessions["s1"]["status"], "submitted")
        env.close()


if __name__ == "__main__":
    unittest.main()
