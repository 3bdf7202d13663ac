"""A small RFC 6455 WebSocket client over a plain socket.

It does what `GET /ws` needs and no more: the opening handshake (with extra headers, such as
`Authorization`), text messages (masked, as a client must send them; fragmented messages from
the server are put back together), ping/pong (a ping is answered at once) and the closing
handshake. No extensions (compression) and no subprotocols are negotiated.

The frame codec (`encode_frame`, `read_frame`) is usable on its own.
"""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import ssl
import struct
from dataclasses import dataclass
from typing import Callable, Dict, Mapping, Optional, Tuple
from urllib.parse import urlsplit

__all__ = [
    "OP_CONTINUATION",
    "OP_TEXT",
    "OP_BINARY",
    "OP_CLOSE",
    "OP_PING",
    "OP_PONG",
    "Frame",
    "WebSocket",
    "WebSocketError",
    "WebSocketClosed",
    "WebSocketHandshakeError",
    "accept_key",
    "encode_frame",
    "read_frame",
]

# The GUID of RFC 6455 section 1.3, hashed with the client's key into Sec-WebSocket-Accept.
_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

OP_CONTINUATION = 0x0
OP_TEXT = 0x1
OP_BINARY = 0x2
OP_CLOSE = 0x8
OP_PING = 0x9
OP_PONG = 0xA
_OPCODES = {OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG}

# The largest message read (a guard against a broken peer, far above what the server sends).
DEFAULT_MAX_SIZE = 64 * 1024 * 1024
# The largest response head read in the opening handshake.
_MAX_HEAD = 64 * 1024


class WebSocketError(Exception):
    """The connection failed or the peer broke the protocol."""


class WebSocketClosed(WebSocketError):
    """The connection is closed (by the peer, or by this side before)."""

    def __init__(self, code: Optional[int] = None, reason: str = ""):
        self.code = code
        self.reason = reason
        text = "the WebSocket connection is closed"
        if code is not None:
            text += f" (code {code}{': ' + reason if reason else ''})"
        super().__init__(text)


class WebSocketHandshakeError(WebSocketError):
    """The server answered the opening handshake with something other than 101."""

    def __init__(self, status: int, reason: str, headers: Dict[str, str], body: bytes):
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        super().__init__(f"WebSocket handshake refused: HTTP {status} {reason}".rstrip())


@dataclass(frozen=True)
class Frame:
    """One WebSocket frame, its payload unmasked."""

    fin: bool
    opcode: int
    payload: bytes


def accept_key(key: str) -> str:
    """The `Sec-WebSocket-Accept` value a server must answer to `Sec-WebSocket-Key: key`."""
    digest = hashlib.sha1((key + _GUID).encode("ascii")).digest()
    return base64.b64encode(digest).decode("ascii")


def _apply_mask(data: bytes, key: bytes) -> bytes:
    """XOR `data` with the 4-byte `key` repeated (masking and unmasking are the same)."""
    n = len(data)
    if n == 0:
        return b""
    stream = (key * (n // 4 + 1))[:n]
    # One big-integer XOR: far faster in pure Python than a byte loop for large payloads.
    return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(n, "big")


def encode_frame(
    opcode: int,
    payload: bytes = b"",
    *,
    fin: bool = True,
    mask: bool = True,
    mask_key: Optional[bytes] = None,
) -> bytes:
    """The bytes of one frame.

    A client masks every frame it sends (RFC 6455 section 5.3): `mask=True`, with a random key
    unless `mask_key` (4 bytes) is given. The payload length takes 7 bits up to 125, 16 bits
    up to 65535 and 64 bits beyond.
    """
    if opcode not in _OPCODES:
        raise ValueError(f"unknown opcode {opcode:#x}")
    if opcode >= OP_CLOSE and (len(payload) > 125 or not fin):
        raise ValueError("a control frame carries at most 125 bytes and is never fragmented")
    first = (0x80 if fin else 0) | opcode
    mask_bit = 0x80 if mask else 0
    n = len(payload)
    if n <= 125:
        head = struct.pack("!BB", first, mask_bit | n)
    elif n <= 0xFFFF:
        head = struct.pack("!BBH", first, mask_bit | 126, n)
    else:
        head = struct.pack("!BBQ", first, mask_bit | 127, n)
    if not mask:
        return head + payload
    if mask_key is None:
        mask_key = os.urandom(4)
    if len(mask_key) != 4:
        raise ValueError("a mask key is 4 bytes")
    return head + mask_key + _apply_mask(payload, mask_key)


def read_frame(read_exact: Callable[[int], bytes], max_size: int = DEFAULT_MAX_SIZE) -> Frame:
    """Read one frame with `read_exact(n)`, which returns exactly `n` bytes or raises.

    Masked frames are unmasked (a server never masks, but decoding one is harmless); reserved
    bits, unknown opcodes, oversized or fragmented control frames and payloads over `max_size`
    are protocol errors.
    """
    b0, b1 = read_exact(2)
    fin = bool(b0 & 0x80)
    if b0 & 0x70:
        raise WebSocketError("a frame sets reserved bits, and no extension was negotiated")
    opcode = b0 & 0x0F
    if opcode not in _OPCODES:
        raise WebSocketError(f"a frame has the unknown opcode {opcode:#x}")
    masked = bool(b1 & 0x80)
    n = b1 & 0x7F
    if n == 126:
        (n,) = struct.unpack("!H", read_exact(2))
    elif n == 127:
        (n,) = struct.unpack("!Q", read_exact(8))
        if n >> 63:
            raise WebSocketError("a frame's 64-bit length sets its most significant bit")
    if opcode >= OP_CLOSE and (n > 125 or not fin):
        raise WebSocketError("a control frame is longer than 125 bytes or fragmented")
    if n > max_size:
        raise WebSocketError(f"a frame of {n} bytes is over the limit of {max_size}")
    key = read_exact(4) if masked else None
    payload = read_exact(n) if n else b""
    if key is not None:
        payload = _apply_mask(payload, key)
    return Frame(fin, opcode, payload)


def _close_payload(code: int, reason: str) -> bytes:
    return struct.pack("!H", code) + reason.encode("utf-8")[:123]


def _parse_close(payload: bytes) -> Tuple[Optional[int], str]:
    if len(payload) < 2:
        return None, ""
    (code,) = struct.unpack("!H", payload[:2])
    return code, payload[2:].decode("utf-8", "replace")


class WebSocket:
    """A client connection. Not thread-safe: one caller sends and receives at a time.

    Open one with `WebSocket.connect(url, headers=..., timeout=...)`; `WebSocket(sock)` wraps
    a socket whose opening handshake is already done (the tests use that).
    """

    def __init__(
        self, sock: socket.socket, *, max_size: int = DEFAULT_MAX_SIZE, buffered: bytes = b""
    ):
        self._sock = sock
        self._buf = bytearray(buffered)
        self.max_size = max_size
        self._close_sent = False
        self._close_received: Optional[Tuple[Optional[int], str]] = None

    # -- opening ------------------------------------------------------------------------------

    @classmethod
    def connect(
        cls,
        url: str,
        *,
        headers: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
        max_size: int = DEFAULT_MAX_SIZE,
        ssl_context: Optional[ssl.SSLContext] = None,
    ) -> "WebSocket":
        """Connect to a `ws://` or `wss://` URL and do the opening handshake.

        Raises `WebSocketHandshakeError` (with the HTTP status and body) when the server
        refuses, `WebSocketError` when its answer is not a valid handshake, `OSError` when the
        connection fails.
        """
        parts = urlsplit(url)
        if parts.scheme not in ("ws", "wss"):
            raise ValueError(f"not a ws:// or wss:// URL: {url!r}")
        secure = parts.scheme == "wss"
        host = parts.hostname or "localhost"
        port = parts.port or (443 if secure else 80)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        sock = socket.create_connection((host, port), timeout=timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if secure:
                context = ssl_context or ssl.create_default_context()
                sock = context.wrap_socket(sock, server_hostname=host)
            key = base64.b64encode(os.urandom(16)).decode("ascii")
            # An IPv6 literal keeps its brackets in the Host header.
            host_header = f"[{host}]" if ":" in host else host
            if parts.port is not None:
                host_header += f":{parts.port}"
            lines = [
                f"GET {target} HTTP/1.1",
                f"Host: {host_header}",
                "Upgrade: websocket",
                "Connection: Upgrade",
                f"Sec-WebSocket-Key: {key}",
                "Sec-WebSocket-Version: 13",
            ]
            for name, value in (headers or {}).items():
                lines.append(f"{name}: {value}")
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            status, reason, answer, rest = _read_response_head(sock)
            if status != 101:
                body = _read_body(sock, answer, rest)
                raise WebSocketHandshakeError(status, reason, answer, body)
            if answer.get("upgrade", "").lower() != "websocket" or "upgrade" not in [
                t.strip() for t in answer.get("connection", "").lower().split(",")
            ]:
                raise WebSocketError("the server's 101 answer does not upgrade to websocket")
            if answer.get("sec-websocket-accept") != accept_key(key):
                raise WebSocketError("the server's Sec-WebSocket-Accept does not match the key")
            return cls(sock, max_size=max_size, buffered=rest)
        except BaseException:
            sock.close()
            raise

    # -- I/O ----------------------------------------------------------------------------------

    def settimeout(self, timeout: Optional[float]) -> None:
        """Seconds a send or a receive may block (None: no limit)."""
        self._sock.settimeout(timeout)

    def gettimeout(self) -> Optional[float]:
        return self._sock.gettimeout()

    def _read_exact(self, n: int) -> bytes:
        while len(self._buf) < n:
            chunk = self._sock.recv(max(65536, n - len(self._buf)))
            if not chunk:
                raise WebSocketClosed(reason="the connection was cut without a close frame")
            self._buf += chunk
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        self._sock.sendall(encode_frame(opcode, payload))

    @property
    def closed(self) -> bool:
        return self._close_sent or self._close_received is not None

    def send_text(self, text: str) -> None:
        """Send one text message (one masked frame)."""
        if self.closed:
            raise WebSocketClosed(*(self._close_received or (None, "")))
        self._send_frame(OP_TEXT, text.encode("utf-8"))

    def ping(self, payload: bytes = b"") -> None:
        """Send a ping; the pong is read (and dropped) by the next `recv_text`."""
        self._send_frame(OP_PING, payload)

    def recv_text(self) -> str:
        """The next data message, as text.

        Pings met on the way are answered with pongs, pongs are dropped. A close frame is
        answered (the closing handshake) and raises `WebSocketClosed` with its code. A binary
        message is decoded as UTF-8 too.
        """
        if self._close_received is not None:
            raise WebSocketClosed(*self._close_received)
        parts = []
        size = 0
        started = False
        while True:
            frame = read_frame(self._read_exact, self.max_size)
            if frame.opcode == OP_PING:
                if not self._close_sent:
                    self._send_frame(OP_PONG, frame.payload)
                continue
            if frame.opcode == OP_PONG:
                continue
            if frame.opcode == OP_CLOSE:
                self._close_received = _parse_close(frame.payload)
                if not self._close_sent:
                    code = self._close_received[0]
                    # Echo the peer's code (RFC 6455 section 5.5.1); none given: 1000.
                    try:
                        self._send_frame(OP_CLOSE, _close_payload(code or 1000, ""))
                    except OSError:
                        pass
                    self._close_sent = True
                self._shutdown()
                raise WebSocketClosed(*self._close_received)
            if frame.opcode == OP_CONTINUATION:
                if not started:
                    raise WebSocketError("a continuation frame with no message begun")
            else:  # OP_TEXT or OP_BINARY
                if started:
                    raise WebSocketError("a new message begun before the last one ended")
                started = True
            size += len(frame.payload)
            if size > self.max_size:
                raise WebSocketError(f"a message over the limit of {self.max_size} bytes")
            parts.append(frame.payload)
            if frame.fin:
                data = b"".join(parts)
                try:
                    return data.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise WebSocketError(f"a text message is not UTF-8: {e}") from None

    def close(self, code: int = 1000, reason: str = "", timeout: float = 5.0) -> None:
        """The closing handshake: send a close frame, wait (at most `timeout` seconds) for the
        server's, then close the socket. Safe to call twice."""
        try:
            if not self._close_sent:
                self._close_sent = True
                self._send_frame(OP_CLOSE, _close_payload(code, reason))
            if self._close_received is None:
                self._sock.settimeout(timeout)
                while True:
                    frame = read_frame(self._read_exact, self.max_size)
                    if frame.opcode == OP_CLOSE:
                        self._close_received = _parse_close(frame.payload)
                        break
        except (OSError, WebSocketError):
            pass  # the peer went away first: nothing more to wait for
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()

    def __enter__(self) -> "WebSocket":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _read_response_head(sock: socket.socket) -> Tuple[int, str, Dict[str, str], bytes]:
    """The status, reason and headers (lower-cased names) of an HTTP response, and the bytes
    read past its head."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > _MAX_HEAD:
            raise WebSocketError("the handshake answer's head is too long")
        chunk = sock.recv(4096)
        if not chunk:
            raise WebSocketError("the server closed the connection during the handshake")
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status_line = lines[0].split(" ", 2)
    if (
        len(status_line) < 2
        or not status_line[0].startswith("HTTP/")
        or not status_line[1].isdigit()
    ):
        raise WebSocketError(f"not an HTTP answer: {lines[0]!r}")
    status = int(status_line[1])
    reason = status_line[2] if len(status_line) > 2 else ""
    headers: Dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return status, reason, headers, rest


def _read_body(
    sock: socket.socket, headers: Dict[str, str], rest: bytes, limit: int = 1 << 20
) -> bytes:
    """The body of a refused handshake's answer, at most `limit` bytes: by Content-Length, or
    chunked, or else what comes within a second. A body that cannot be read is left short."""
    chunked = "chunked" in headers.get("transfer-encoding", "").lower()
    try:
        length = int(headers.get("content-length", "-1"))
    except ValueError:
        length = -1
    if length < 0 and not chunked:
        sock.settimeout(1.0)
    body = rest
    try:
        while len(body) < limit:
            if length >= 0 and len(body) >= length:
                break
            if chunked and (body.startswith(b"0\r\n") or b"\r\n0\r\n" in body):
                break
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    except OSError:
        pass
    if length >= 0:
        body = body[:length]
    elif chunked:
        body = _dechunk(body)
    return body[:limit]


def _dechunk(data: bytes) -> bytes:
    """The payload of a chunked transfer encoding (as far as it is complete)."""
    out = b""
    while True:
        size_line, sep, data = data.partition(b"\r\n")
        if not sep:
            return out
        try:
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
        except ValueError:
            return out
        if size == 0:
            return out
        out += data[:size]
        data = data[size + 2 :]
