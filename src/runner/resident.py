"""swe-forge's resident pytest runner: one long-lived interpreter per worker that has imported
pytest, its plugins and the third-party modules a run of the suite imports (never the
repository's own modules), and forks a child per run. The child runs pytest on the worktree as
`python -m pytest ARGS` would, with the run's limits; the parent waits for it (with the wall-clock
timeout), kills its whole process group, and answers.

Started as `python -c THIS` at the repository root, with the environment of a fresh run.
Protocol: one JSON line per message on stdin/stdout.
  start     {"warm": [module names to pre-import], "probe": source of swe-forge's probe plugin}
  greeting  {"ready": true, "pid": N, "warm": N, "unsafe": null | "why forking is not safe"}
  request   {"args": [...], "timeout": S, "cpu": S | null, "stdout": P, "stderr": P,
             "times": P, "as": BYTES | null, "nproc": N | null, "procs": P | null,
             "imports": P | null, "budgets": {test file: seconds} | absent}
  answer    {"rc": N | null, "signal": N | null, "timed_out": bool, "elapsed": S, "cpu_s": S}
`times` gets bash's `times` format (the runner reads the CPU time from it as for a fresh run);
`procs` is a cgroup's cgroup.procs the child joins; `imports` gets the modules the child
imported from outside the repository (what the next residents pre-import).

The children share the repository's compiled code through the parent (see CODE): each child
compiles only the files whose exact bytes no earlier child compiled.
"""
import json
import os
import resource
import select
import signal
import sys
import threading
import time

ROOT = os.path.realpath(os.getcwd())
PROTO_IN = os.fdopen(os.dup(0), "rb", buffering=0)
PROTO_OUT = os.fdopen(os.dup(1), "wb", buffering=0)
_null = os.open(os.devnull, os.O_RDWR)
os.dup2(_null, 0)
os.dup2(_null, 1)


def under_root(path):
    if not path:
        return False
    try:
        p = os.path.realpath(path)
    except (TypeError, ValueError):
        return False
    return p == ROOT or p.startswith(ROOT + os.sep)


def own_names():
    """Top-level module names the repository provides on sys.path (its import roots)."""
    names = set()
    for entry in sys.path:
        root = os.path.realpath(entry or ROOT)
        if not under_root(root) or not os.path.isdir(root):
            continue
        for name in os.listdir(root):
            path = os.path.join(root, name)
            if os.path.isdir(path) and name.isidentifier():
                names.add(name)
            elif name.endswith((".py", ".pyc")) or ".cpython-" in name or name.endswith(".so"):
                names.add(name.split(".")[0])
    return names


class Blocker:
    """Refuses every import of the repository's own modules while warming up."""

    def __init__(self, names):
        self.names = names

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.names:
            raise ModuleNotFoundError("swe-forge resident: not pre-importing " + name, name=name)
        return None


def module_file(m):
    f = getattr(m, "__file__", None)
    return f if isinstance(f, str) else ""


def warm(extra):
    blocker = Blocker(own_names())
    sys.meta_path.insert(0, blocker)
    count = 0
    try:
        import pytest  # noqa: F401
        from _pytest.config import default_plugins

        for name in default_plugins:
            try:
                __import__("_pytest." + name)
                count += 1
            except Exception:
                pass
        try:
            from importlib.metadata import entry_points

            eps = entry_points(group="pytest11")
        except Exception:
            eps = []
        for ep in eps:
            try:
                ep.load()
                count += 1
            except Exception:
                pass
        for name in extra:
            try:
                __import__(name)
                count += 1
            except Exception:
                pass
    finally:
        sys.meta_path.remove(blocker)
    unsafe = None
    if threading.active_count() != 1:
        unsafe = "a pre-imported module started a thread (%s)" % ", ".join(
            t.name for t in threading.enumerate() if t is not threading.main_thread())
    mine = [n for n, m in list(sys.modules.items()) if under_root(module_file(m))]
    if mine:
        unsafe = "the repository's own module %s was imported" % mine[0]
    return count, unsafe


def flush_std():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


PROBE = [None]

# Compiled code of the repository's files, shared by the children: a child's pytest compiles
# the modules it imports and rewrites the asserts of the test files and conftest.py files it
# collects, which on real suites costs more than running the tests it was asked for (boltons:
# 0.19 s to rewrite tests/test_iterutils.py, 1.6 s for all its test files). Each entry is keyed
# by the file's path and the sha256 of its exact bytes (never by a modification time: a
# mutation of the same size within the same second is still another key), and holds the
# marshalled code object that compiling those bytes gives. A child uses an entry for those
# bytes only, compiles everything else as it would, and hands what it compiled back to the
# parent at its end (through CODE_FD, a memory file), so the next children find it. Only when
# bytecode writing is off (the sandboxes set PYTHONDONTWRITEBYTECODE): then nothing in
# the process reads or writes a .pyc of the repository, and the cache is its only one.
CODE = {}
CODE_NEW = {}
CODE_BYTES = [0]
CODE_MAX = 64 * 1024 * 1024
CODE_FD = [None]


def code_key(kind, path, data):
    import hashlib

    return "%s\0%s\0%s" % (kind, path, hashlib.sha256(data).hexdigest())


def cached_code(key):
    blob = CODE.get(key)
    if blob is None:
        return None
    import marshal

    try:
        return marshal.loads(blob)
    except Exception:
        return None


def keep_code(key, co):
    import marshal

    try:
        CODE_NEW[key] = marshal.dumps(co)
    except Exception:
        pass


def install_code_cache():
    """Serve the repository's compiled code from CODE (see above)."""
    if not sys.dont_write_bytecode:
        return
    try:
        import importlib._bootstrap_external as external

        compile_source = external.SourceLoader.source_to_code

        def source_to_code(self, data, path, *args, **kwargs):
            if args or kwargs or not isinstance(data, bytes) or not under_root(path):
                return compile_source(self, data, path, *args, **kwargs)
            key = code_key("py", path, data)
            co = cached_code(key)
            if co is None:
                co = compile_source(self, data, path)
                keep_code(key, co)
            return co

        external.SourceLoader.source_to_code = source_to_code
    except Exception:
        pass
    try:
        from _pytest.assertion import rewrite

        rewrite_test = rewrite._rewrite_test

        def cached_rewrite(fn, config, *args, **kwargs):
            if args or kwargs or not sys.dont_write_bytecode or not under_root(str(fn)):
                return rewrite_test(fn, config, *args, **kwargs)
            try:
                with open(fn, "rb") as f:
                    data = f.read()
                hook = bool(config is not None and config.getini("enable_assertion_pass_hook"))
            except Exception:
                return rewrite_test(fn, config)
            key = code_key("rewrite-%d" % hook, str(fn), data)
            co = cached_code(key)
            if co is not None:
                # The first item only feeds a .pyc write, which is off.
                return None, co
            got = rewrite_test(fn, config)
            if isinstance(got, tuple) and len(got) == 2:
                keep_code(key, got[1])
            return got

        rewrite._rewrite_test = cached_rewrite
    except Exception:
        pass


def hand_back_code():
    """The child's newly compiled entries, to the parent (see CODE)."""
    fd = CODE_FD[0]
    if fd is None or not CODE_NEW:
        return
    import marshal

    try:
        os.lseek(fd, 0, os.SEEK_SET)
        blob = marshal.dumps(CODE_NEW)
        view = memoryview(blob)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    except Exception:
        pass


def take_code():
    """The entries the last child handed back (see CODE), kept up to CODE_MAX bytes."""
    fd = CODE_FD[0]
    if fd is None:
        return
    import marshal

    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        left = size
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        os.ftruncate(fd, 0)
        got = marshal.loads(b"".join(chunks))
    except Exception:
        try:
            os.ftruncate(fd, 0)
        except Exception:
            pass
        return
    if not isinstance(got, dict):
        return
    for key, blob in got.items():
        if (isinstance(key, str) and isinstance(blob, bytes) and key not in CODE
                and CODE_BYTES[0] + len(blob) <= CODE_MAX):
            CODE[key] = blob
            CODE_BYTES[0] += len(blob)


def probe_plugins():
    """swe-forge's probe plugin (sent in the start message), as a fresh run loads it with
    `-p swe_forge_probe`."""
    if not PROBE[0]:
        return []
    import types

    mod = types.ModuleType("swe_forge_probe")
    mod.__file__ = "swe_forge_probe.py"
    exec(compile(PROBE[0], mod.__file__, "exec"), mod.__dict__)
    sys.modules["swe_forge_probe"] = mod
    return [mod]


def child(req, before):
    before_top = {n.split(".")[0] for n in before}
    os.setpgid(0, 0)
    procs = req.get("procs")
    if procs:
        try:
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        except OSError:
            pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if req.get("as"):
        resource.setrlimit(resource.RLIMIT_AS, (req["as"], req["as"]))
    if req.get("nproc"):
        resource.setrlimit(resource.RLIMIT_NPROC, (req["nproc"], req["nproc"]))
    if req.get("cpu"):
        soft = int(-(-req["cpu"] // 1))
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))
    # As a fresh interpreter has them: Python itself ignores SIGPIPE and SIGXFSZ at start (a
    # write to a closed socket raises BrokenPipeError; boltons' socket tests rely on it), the
    # others are the system's defaults.
    for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGXCPU):
        signal.signal(sig, signal.SIG_DFL)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    out = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.close(out)
    os.close(err)
    os.chdir(ROOT)
    # As `python -m pytest` sets them: the working directory first on the path.
    if sys.path and sys.path[0] == "":
        sys.path[0] = ROOT
    import pytest

    # Modules this process imported before the fork cannot be assertion-rewritten; a fresh
    # run rewrites those a plugin's distribution holds (only their own asserts' messages
    # differ), so pytest's warning about them is not the project's and is left out.
    try:
        from _pytest.assertion import rewrite

        warn = rewrite.AssertionRewritingHook._warn_already_imported

        def quiet(self, name, warn=warn):
            if name.split(".")[0] not in before_top:
                warn(self, name)

        rewrite.AssertionRewritingHook._warn_already_imported = quiet
    except Exception:
        pass
    # The run's per-file test budgets, which the probe reads as a fresh run's does.
    if req.get("budgets"):
        os.environ["SWE_FORGE_TEST_BUDGETS"] = json.dumps(req["budgets"])
    else:
        os.environ.pop("SWE_FORGE_TEST_BUDGETS", None)
    sys.argv = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py")] + req["args"]
    code = 1
    try:
        code = pytest.main(req["args"], plugins=probe_plugins())
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    try:
        import atexit

        atexit._run_exitfuncs()
    except BaseException:
        pass
    flush_std()
    hand_back_code()
    if req.get("imports"):
        try:
            names = sorted(
                n for n, m in list(sys.modules.items())
                if n not in before and "." not in n and module_file(m)
                and not under_root(module_file(m)))
            with open(req["imports"], "w") as f:
                f.write("\n".join(names))
        except Exception:
            pass
    os._exit(int(code) & 0xFF)


def wait(pid, timeout):
    """(status, rusage, timed_out)"""
    deadline = time.monotonic() + timeout
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    timed_out = False
    while True:
        got, status, usage = os.wait4(pid, os.WNOHANG)
        if got == pid:
            break
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            _, status, usage = os.wait4(pid, 0)
            break
        if fd is not None:
            select.select([fd], [], [], left)
        else:
            time.sleep(min(left, 0.002))
    if fd is not None:
        os.close(fd)
    return status, usage, timed_out


def read_line(buf):
    while b"\n" not in buf:
        chunk = PROTO_IN.read(65536)
        if not chunk:
            return None, buf
        buf += chunk
    line, buf = buf.split(b"\n", 1)
    return json.loads(line), buf


def main():
    first, buf = read_line(b"")
    if first is None:
        return
    PROBE[0] = first.get("probe")
    count, unsafe = warm(first.get("warm") or [])
    install_code_cache()
    try:
        CODE_FD[0] = os.memfd_create("swe-forge-code")
    except (AttributeError, OSError):
        CODE_FD[0] = None
    before = set(sys.modules)
    # What is alive now (pytest, the pre-imported modules) lives as long as the process: out
    # of the collector's sight, so a child's collections do not walk it, nor touch (and copy)
    # its pages.
    import gc

    gc.collect()
    gc.freeze()
    PROTO_OUT.write(json.dumps({"ready": True, "pid": os.getpid(), "warm": count,
                                "unsafe": unsafe}).encode() + b"\n")
    while True:
        req, buf = read_line(buf)
        if req is None:
            return
        # Nothing buffered may be written twice, by the parent and by a child.
        flush_std()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            try:
                child(req, before)
            finally:
                os._exit(70)
        status, usage, timed_out = wait(pid, req["timeout"])
        elapsed = time.monotonic() - started
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        take_code()
        cpu = usage.ru_utime + usage.ru_stime
        try:
            with open(req["times"], "w") as f:
                f.write("0m0.000s 0m0.000s\n0m%.3fs 0m%.3fs\n" % (usage.ru_utime, usage.ru_stime))
        except OSError:
            pass
        rc = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        PROTO_OUT.write(json.dumps({"rc": rc, "signal": sig, "timed_out": timed_out,
                                    "elapsed": elapsed, "cpu_s": cpu}).encode() + b"\n")


main()
