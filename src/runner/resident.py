"""swe-forge's resident pytest runner: one long-lived interpreter per worker that has imported
pytest, its plugins and the third-party modules a run of the suite imports (never the
repository's own modules), and forks a child per run. The child runs pytest on the worktree as
`python -m pytest ARGS` would, with the run's limits; the parent waits for it (with the wall-clock
timeout), kills its whole process group, and answers.

Started as `python -c THIS` at the repository root, with the environment of a fresh run.
Protocol: one JSON line per message on stdin/stdout.
  start     {"warm": [module names to pre-import], "probe": source of swe-forge's probe plugin,
             "zygotes": how many zygotes to keep (see ZYGOTES; 0: none)}
  greeting  {"ready": true, "pid": N, "warm": N, "unsafe": null | "why forking is not safe"}
  request   {"args": [...], "timeout": S, "cpu": S | null, "stdout": P, "stderr": P,
             "times": P, "as": BYTES | null, "nproc": N | null, "procs": P | null,
             "imports": P | null, "budgets": {test file: seconds} | absent}
  answer    {"rc": N | null, "signal": N | null, "timed_out": bool, "elapsed": S, "cpu_s": S,
             "via": "plain" | "zygote" | "new zygote" | "new zygote (why the last was stale)"
                    | "no zygote" (the run's zygote made the run itself),
             "keep": [pids of the zygotes, which the sandbox spares when it reaps the run]}
`times` gets bash's `times` format (the runner reads the CPU time from it as for a fresh run);
`procs` is a cgroup's cgroup.procs the child joins; `imports` gets the modules the child
imported from outside the repository (what the next residents pre-import).

The children share the repository's compiled code through the parent (see CODE): each child
compiles only the files whose exact bytes no earlier child compiled. A run with the arguments
of an earlier one is forked instead from that run's zygote, a copy of it kept where its tests
would start, brought to the tree as it is now (see ZYGOTES).
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


def join_and_limit(req, cpu=True, procs=True):
    """The run's cgroup (`procs`) and its limits, for this process and what it starts."""
    if procs and req.get("procs"):
        try:
            with open(req["procs"], "w") as f:
                f.write(str(os.getpid()))
        except OSError:
            pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if req.get("as"):
        resource.setrlimit(resource.RLIMIT_AS, (req["as"], req["as"]))
    if req.get("nproc"):
        resource.setrlimit(resource.RLIMIT_NPROC, (req["nproc"], req["nproc"]))
    if cpu and req.get("cpu"):
        soft = int(-(-req["cpu"] // 1))
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))


def set_budgets(req):
    """The run's per-file test budgets, which the probe reads as a fresh run's does."""
    if req.get("budgets"):
        os.environ["SWE_FORGE_TEST_BUDGETS"] = json.dumps(req["budgets"])
    else:
        os.environ.pop("SWE_FORGE_TEST_BUDGETS", None)


def child(req, before, zygote=None):
    """Runs pytest for `req` and exits with its status. With `zygote` (a channel to the
    parent), the collected session is kept for the next runs of the same arguments (see
    ZYGOTES): the run itself continues in a forked copy."""
    before_top = {n.split(".")[0] for n in before}
    os.setpgid(0, 0)
    # A zygote outlives this run: it joins no run's cgroup and takes no CPU limit (each run
    # forked from it does).
    join_and_limit(req, cpu=zygote is None, procs=zygote is None)
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
    set_budgets(req)
    sys.argv = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py")] + req["args"]
    plugins = probe_plugins()
    if zygote is not None:
        plugins.append(zygote_plugin(zygote, req))
    code = 1
    try:
        code = pytest.main(req["args"], plugins=plugins)
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


# Zygotes. Most of a run's cost on a real suite is pytest's configuration and the collection
# of the test modules, and a candidate's runs repeat the same arguments on trees that differ
# in a line or two of the repository's code. So a run with the same arguments as an earlier
# one is forked from a copy of that earlier run stopped where its tests would start (its
# zygote: pytest configured, the test modules imported, the items collected), after the
# tree's differences from what the zygote read are applied to it:
#   - every file the zygote opened (its modules, the test files, the configuration, data),
#     every directory it listed, and whether a conftest.py or __init__.py is on the way from
#     the root to a test file or module, are compared with the tree (size, time and inode,
#     then the sha256 of the bytes);
#   - a changed file that is an imported module of the repository (not a test file, not one
#     pytest rewrote) is compiled again, and the new code of each changed function replaces
#     the old one in every function object made from it (`__code__`), which is what importing
#     the new file would give, provided the change is inside function bodies (module and
#     class bodies compile to the same instructions and constants), the same functions exist,
#     no changed function ran while the zygote imported and collected (a profiler records
#     what ran), none is suspended in a generator, and each keeps its free variables;
#   - anything else (a test file changed, a module-level change, a file gone) makes the
#     zygote stale: the run is made by a new zygote from the tree as it is.
# A zygote answers one run at a time. At most ZYGOTE_MAX live, and their private memory stays
# under ZYGOTE_MEMORY (they share the sandbox's memory with the runs): the least recently used
# goes first.
ZYGOTE_MAX = 4  # the start message's "zygotes"
ZYGOTE_MEMORY = 1 << 30
ZYGOTES = {}
ZYGOTE_TICK = [0]
STALE = 75
ZYGOTE_GRACE = 3.0


def zygote_key(req):
    """What a zygote is for: the run's arguments, its JUnit report's path left out (each run
    writes its own), and the limits the zygote holds; `None`: no zygote for this run."""
    if ZYGOTE_MAX <= 0 or req.get("imports") or not hasattr(os, "register_at_fork"):
        return None
    args = []
    report = False
    for a in req["args"]:
        if a.startswith("--junitxml="):
            report = True
            a = "--junitxml="
        args.append(a)
    if not report:
        return None
    return json.dumps([args, req.get("as"), req.get("nproc")])


def report_path(args):
    for a in args:
        if a.startswith("--junitxml="):
            return os.path.abspath(os.path.join(ROOT, a[len("--junitxml="):]))
    return None


REAL = {}


def real(path):
    got = REAL.get(path)
    if got is None:
        got = REAL[path] = os.path.realpath(path)
    return got


def code_id(co):
    """A code object's identity across compilations of the same file: the file's real path,
    the qualified name and the first line."""
    return (real(co.co_filename), getattr(co, "co_qualname", co.co_name), co.co_firstlineno)


def is_function(co):
    return bool(co.co_flags & 0x1)  # CO_OPTIMIZED: a function, not a module or class body


def flatten(co, out, in_function=False):
    """`co` and the code nested in it, in order, each with whether a function holds it."""
    out.append((co, in_function))
    for c in co.co_consts:
        if isinstance(c, type(co)):
            flatten(c, out, in_function or is_function(co))
    return out


def skeleton(co):
    consts = tuple(("<code>", c.co_name) if isinstance(c, type(co)) else (type(c).__name__, c)
                   for c in co.co_consts)
    return (co.co_code, co.co_names, co.co_varnames, co.co_freevars, co.co_cellvars,
            co.co_flags, co.co_argcount, getattr(co, "co_exceptiontable", None), consts)


def file_id(st):
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


def sha(data):
    import hashlib

    return hashlib.sha256(data).digest()


def rel(path):
    return os.path.relpath(path, ROOT)


class Seen:
    """What a zygote read of the tree while it imported and collected (an audit hook)."""

    def __init__(self):
        self.opened = set()
        self.listed = set()
        self.on = True

    def hook(self, event, args):
        if not self.on:
            return
        try:
            if event == "open" and args and isinstance(args[0], (str, bytes)):
                path = os.fsdecode(args[0])
            elif event in ("os.listdir", "os.scandir") and args:
                path = args[0]
                if path is None:
                    path = "."
                if not isinstance(path, (str, bytes)):
                    return
                path = os.fsdecode(path)
            else:
                return
            path = os.path.realpath(os.path.join(ROOT, path))
            if under_root(path):
                (self.opened if event == "open" else self.listed).add(path)
        except Exception:
            pass


class Snapshot:
    """The tree as a zygote saw it, and how to bring the zygote to the tree as it is now."""

    def __init__(self, session, seen, executed, early):
        import gc

        self.executed = executed
        modules = {}
        rewritten = set()
        self.names = {}
        for m in list(sys.modules.values()):
            f = module_file(m)
            if f.endswith(".py") and under_root(f):
                name = f
                f = os.path.realpath(f)
                modules[f] = m
                self.names[f] = name
                if type(getattr(m, "__loader__", None)).__name__ == "AssertionRewritingHook":
                    rewritten.add(f)
        items = set()
        for item in session.items:
            p = getattr(item, "path", None) or getattr(item, "fspath", None)
            if p is not None:
                items.add(os.path.realpath(str(p)))
        self.files = {}
        for path in set(seen.opened) | set(modules) | items:
            try:
                st = os.stat(path)
                if not os.path.isfile(path):
                    continue
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                self.files[path] = None
                continue
            patchable = path in modules and path not in rewritten and path not in items \
                and path not in early and os.path.basename(path) != "conftest.py"
            self.files[path] = (file_id(st), sha(data), data if patchable else None)
        self.listed = {}
        for d in seen.listed:
            try:
                self.listed[d] = sorted(os.listdir(d))
            except OSError:
                self.listed[d] = None
        self.exists = {}
        for path in list(items) + list(modules):
            d = os.path.dirname(path)
            while under_root(d):
                for name in ("conftest.py", "__init__.py"):
                    p = os.path.join(d, name)
                    if p not in self.exists:
                        self.exists[p] = os.path.isfile(p)
                if d == ROOT:
                    break
                d = os.path.dirname(d)
        # Every function object made from the repository's code, by its code's identity; and
        # the code of generators and coroutines that are suspended.
        self.functions = {}
        self.suspended = set()
        fn, gens = type(flatten), tuple(
            t for t in (type((lambda: (yield))()),) if t is not None)
        for o in gc.get_objects():
            t = type(o)
            if t is fn:
                k = code_id(o.__code__)
                if k[0] in modules:
                    self.functions.setdefault(k, []).append(o)
            elif isinstance(o, gens) or t.__name__ in ("coroutine", "async_generator"):
                co = getattr(o, "gi_code", None) or getattr(o, "cr_code", None) \
                    or getattr(o, "ag_code", None)
                if co is not None and under_root(co.co_filename):
                    self.suspended.add(code_id(co))

    def bring_up_to_date(self):
        """`None` when this process now runs the tree as it is, else why it cannot."""
        changed = []
        for path, rec in self.files.items():
            try:
                st = os.stat(path)
            except OSError:
                if rec is None:
                    continue
                return "%s is gone" % rel(path)
            if rec is None:
                return "%s appeared" % rel(path)
            if file_id(st) == rec[0]:
                continue
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError as e:
                return "%s: %s" % (rel(path), e)
            if sha(data) == rec[1]:
                continue
            if rec[2] is None:
                return "%s changed" % rel(path)
            changed.append((path, rec[2], data))
        for d, names in self.listed.items():
            try:
                now = sorted(os.listdir(d))
            except OSError:
                now = None
            if now != names:
                return "the files in %s changed" % (rel(d) or ".")
        for p, existed in self.exists.items():
            if os.path.isfile(p) != existed:
                return "%s %s" % (rel(p), "is gone" if existed else "appeared")
        for path, old, new in changed:
            why = self.patch(path, old, new)
            if why:
                return why
        try:
            import importlib
            import linecache

            linecache.clearcache()
            importlib.invalidate_caches()
        except Exception:
            pass
        return None

    def patch(self, path, old_src, new_src):
        name = rel(path)
        filename = self.names.get(path, path)
        try:
            olds = flatten(compile(old_src, filename, "exec", dont_inherit=True), [])
            news = flatten(compile(new_src, filename, "exec", dont_inherit=True), [])
        except Exception as e:
            return "%s does not compile (%s)" % (name, type(e).__name__)
        if [(c.co_name, is_function(c), f) for c, f in olds] != \
                [(c.co_name, is_function(c), f) for c, f in news]:
            return "%s: the change adds or removes code blocks" % name
        todo = []
        for (o, nested), (n, _) in zip(olds, news):
            if not is_function(o):
                if skeleton(o) != skeleton(n):
                    return "%s: a change outside function bodies (%s)" % (name, o.co_name)
                continue
            if o == n:
                continue
            k = code_id(o)
            if k in self.executed:
                return "%s: %s ran while the tests were collected" % (name, k[1])
            if k in self.suspended:
                return "%s: %s is suspended in a generator" % (name, k[1])
            if o.co_freevars != n.co_freevars:
                return "%s: %s's free variables changed" % (name, k[1])
            todo.append((k, o, n, nested))
        for k, o, n, nested in todo:
            found = 0
            for f in self.functions.get(k, ()):
                if f.__code__ == o:
                    try:
                        f.__code__ = n
                    except Exception as e:
                        return "%s: %s (%s)" % (name, k[1], e)
                    found += 1
            # A function defined in a module or class body exists from the import on (a
            # function inside another is made when that one runs, from the new code): if
            # none holds this code, something else holds what it became (a decorator that
            # kept no function), which only importing the file again would remake.
            if not found and not nested:
                return "%s: no function object holds %s" % (name, k[1])
        return None


def profile_start():
    """A profiler recording which of the repository's code runs (None: not possible here)."""
    if sys.getprofile() is not None:
        return None
    try:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
        return prof
    except Exception:
        return None


def profile_stop(prof):
    """The code that ran under `prof`, or None when the record cannot be trusted."""
    if sys.version_info < (3, 12) and sys.getprofile() is not prof:
        return None
    try:
        prof.disable()
        stats = prof.getstats()
    except Exception:
        return None
    ran = set()
    for e in stats:
        co = getattr(e, "code", None)
        if not isinstance(co, str) and co is not None and under_root(co.co_filename):
            ran.add(code_id(co))
    return ran


def send(fd, msg):
    data = json.dumps(msg).encode() + b"\n"
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_msg(fd, buf, deadline):
    """(message or None, buf): None at EOF or the deadline."""
    while b"\n" not in buf:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return None, buf
        if not select.select([fd], [], [], left)[0]:
            return None, buf
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return None, buf
        if not chunk:
            return None, buf
        buf += chunk
    line, buf = buf.split(b"\n", 1)
    return json.loads(line), buf


class Channel:
    """A zygote's end of its pipes, and what it recorded while it started."""

    def __init__(self, rfd, wfd, deadline):
        self.rfd, self.wfd, self.deadline = rfd, wfd, deadline
        self.buf = b""
        self.seen = Seen()
        self.prof = None
        self.unprofiled = False
        self.early = set()
        self.out_id = self.err_id = None


def zygote_plugin(chan, req):
    import pytest

    class Zygote:
        # What ran before (pytest's own configuration, plugins from outside the repository)
        # is not recorded: any module of the repository imported by then is left out of the
        # hot patches instead (see Snapshot).
        @pytest.hookimpl(tryfirst=True)
        def pytest_load_initial_conftests(self):
            if chan.prof is None and not chan.unprofiled:
                chan.early = set(
                    real(module_file(m)) for m in list(sys.modules.values())
                    if under_root(module_file(m)))
                chan.prof = profile_start()
                chan.unprofiled = chan.prof is None

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtestloop(self, session):
            serve(chan, req, session)

    return Zygote()


def redirect(fd_ids, req):
    """This process's output to `req`'s files: every descriptor open on the first run's."""
    out = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for name in os.listdir("/proc/self/fd"):
        try:
            fd = int(name)
            if fd in (out, err):
                continue
            st = os.fstat(fd)
        except (ValueError, OSError):
            continue
        ident = (st.st_dev, st.st_ino)
        if ident == fd_ids[0]:
            os.dup2(out, fd)
        elif ident == fd_ids[1]:
            os.dup2(err, fd)
    os.close(out)
    os.close(err)


def next_run(session, req, fd_ids):
    """A run forked from a zygote: its own output, report, budgets and clocks."""
    config = session.config
    flush_std()
    redirect(fd_ids, req)
    set_budgets(req)
    path = report_path(req["args"])
    probe = sys.modules.get("swe_forge_probe")
    if probe is not None:
        try:
            probe._BUDGETS = dict(req.get("budgets") or {})
            probe._watch["dir"] = os.path.dirname(path) if path else None
        except Exception:
            pass
    try:
        import pytest

        sys.argv = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py")] + req["args"]
    except Exception:
        pass
    try:
        from _pytest.junitxml import xml_key

        xml = config.stash.get(xml_key, None)
    except Exception:
        xml = getattr(config, "_xml", None)
    if xml is not None and path:
        xml.logfile = os.path.normpath(path)
        config.option.xmlpath = path
        try:
            xml.pytest_sessionstart()
        except Exception:
            pass
    tr = config.pluginmanager.getplugin("terminalreporter")
    if tr is not None:
        try:
            if hasattr(tr, "_session_start"):
                from _pytest import timing

                tr._session_start = timing.Instant()
            elif hasattr(tr, "_sessionstarttime"):
                from _pytest import timing

                tr._sessionstarttime = timing.time()
        except Exception:
            pass
    # What an earlier run left in pytest's capture files (a run killed mid-test).
    try:
        capman = config.pluginmanager.getplugin("capturemanager")
        multi = getattr(capman, "_global_capturing", None)
        for cap in (getattr(multi, "out", None), getattr(multi, "err", None)):
            tmp = getattr(cap, "tmpfile", None)
            if tmp is not None:
                tmp.seek(0)
                tmp.truncate()
    except Exception:
        pass


def serve(chan, req, session):
    """In the zygote, where the first run's tests would start: fork the runs (this returns
    only in them, which go on with pytest's session) and answer for them, until the parent
    closes the channel. Returns at once, running the first run itself, when forking from
    here cannot be trusted."""
    chan.seen.on = False
    ran = profile_stop(chan.prof) if chan.prof is not None else None
    if ran is None or threading.active_count() != 1:
        join_and_limit(req)
        return
    try:
        snap = Snapshot(session, chan.seen, ran, chan.early)
    except Exception:
        join_and_limit(req)
        return
    setup_usage = resource.getrusage(resource.RUSAGE_SELF)
    first = True
    deadline = chan.deadline
    while True:
        flush_std()
        why_r, why_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(why_r)
                if not first:
                    why = snap.bring_up_to_date()
                    if why is not None:
                        os.write(why_w, why.encode()[:4000])
                        os._exit(STALE)
                    next_run(session, req, (chan.out_id, chan.err_id))
                os.setpgid(0, 0)
                join_and_limit(req)
                for fd in (chan.rfd, chan.wfd, why_w):
                    os.close(fd)
            except BaseException as e:
                try:
                    os.write(why_w, repr(e).encode()[:4000])
                except Exception:
                    pass
                os._exit(STALE)
            return
        os.close(why_w)
        CODE_NEW.clear()
        send(chan.wfd, {"child": pid})
        status, usage, timed_out = wait(pid, max(deadline - time.monotonic(), 0.001))
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        rc = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        answer = {"rc": rc, "signal": sig, "timed_out": timed_out,
                  "utime": usage.ru_utime, "stime": usage.ru_stime}
        if first:
            answer["utime"] += setup_usage.ru_utime
            answer["stime"] += setup_usage.ru_stime
        try:
            why = os.read(why_r, 4096).decode("utf-8", "replace")
        except OSError:
            why = ""
        os.close(why_r)
        if not first and rc == STALE and not timed_out and why:
            answer = {"stale": why}
        send(chan.wfd, answer)
        first = False
        req, chan.buf = read_msg(chan.rfd, chan.buf, None)
        if req is None:
            os._exit(0)
        deadline = req.get("_deadline") or time.monotonic() + req["timeout"]


def die_with_parent():
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def zygote_child(req, before, rfd, wfd, deadline):
    """The zygote's process: the first run, kept where its tests would start."""
    for z in ZYGOTES.values():
        for fd in (z["to"], z["from"]):
            try:
                os.close(fd)
            except OSError:
                pass
    for f in (PROTO_IN, PROTO_OUT):
        try:
            os.close(f.fileno())
        except OSError:
            pass
    die_with_parent()
    chan = Channel(rfd, wfd, deadline)
    try:
        sys.addaudithook(chan.seen.hook)
    except Exception:
        pass
    out = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    st = os.fstat(out)
    chan.out_id = (st.st_dev, st.st_ino)
    os.close(out)
    err = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    st = os.fstat(err)
    chan.err_id = (st.st_dev, st.st_ino)
    os.close(err)
    child(req, before, zygote=chan)


def zygote_drop(key):
    z = ZYGOTES.pop(key, None)
    if z is None:
        return
    for fd in (z["to"], z["from"]):
        try:
            os.close(fd)
        except OSError:
            pass
    for pid in (z["pid"], z.get("child")):
        if pid:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
    try:
        os.kill(z["pid"], signal.SIGKILL)
    except OSError:
        pass
    try:
        os.waitpid(z["pid"], 0)
    except OSError:
        pass


def private_memory(pid):
    """Bytes only this process holds (its pages shared with the resident not counted)."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            total = 0
            for line in f:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    total += int(line.split()[1]) * 1024
            return total
    except (OSError, ValueError, IndexError):
        return 0


def zygotes_fit(keep):
    """Drops the least recently used zygotes but `keep` while they hold more than
    ZYGOTE_MEMORY between them."""
    sizes = {k: private_memory(z["pid"]) for k, z in ZYGOTES.items()}
    for k in sorted(ZYGOTES, key=lambda k: ZYGOTES[k]["used"]):
        if sum(sizes.values()) <= ZYGOTE_MEMORY:
            break
        if k != keep:
            zygote_drop(k)
            sizes.pop(k, None)


def zygote_answer(z, deadline):
    """The zygote's answer for the run it was sent, or None (it exited or hung: see
    z["lost"])."""
    while True:
        msg, z["buf"] = read_msg(z["from"], z["buf"], deadline + ZYGOTE_GRACE)
        if msg is None:
            return None
        if "child" in msg:
            z["child"] = msg["child"]
            continue
        z["child"] = None
        return msg


def zygote_run(req, before, started):
    """A run through a zygote: (answer, utime, stime), or None when the run is to be made
    by a plain child."""
    key = zygote_key(req)
    if key is None:
        return None
    deadline = started + req["timeout"]
    z = ZYGOTES.get(key)
    if z is not None:
        try:
            send(z["to"], dict(req, _deadline=deadline))
            msg = zygote_answer(z, deadline)
        except OSError:
            msg = None
        if msg is not None and "stale" not in msg:
            ZYGOTE_TICK[0] += 1
            z["used"] = ZYGOTE_TICK[0]
            return msg, "zygote"
        lost = msg is None
        zygote_drop(key)
        if lost:
            return None
        stale = msg["stale"]
    else:
        stale = None
    while len(ZYGOTES) >= ZYGOTE_MAX:
        zygote_drop(min(ZYGOTES, key=lambda k: ZYGOTES[k]["used"]))
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    flush_std()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(w1)
            os.close(r2)
            zygote_child(req, before, r1, w2, deadline)
        finally:
            os._exit(70)
    os.close(r1)
    os.close(w2)
    ZYGOTE_TICK[0] += 1
    z = {"pid": pid, "to": w1, "from": r2, "buf": b"", "child": None, "used": ZYGOTE_TICK[0]}
    ZYGOTES[key] = z
    msg = zygote_answer(z, deadline)
    if msg is not None:
        zygotes_fit(key)
        return msg, "new zygote" if stale is None else "new zygote (%s)" % stale
    # It ran the run itself and exited (its tests could not be forked from where they would
    # start, or pytest stopped before them), or it hung past the deadline.
    ZYGOTES.pop(key, None)
    for fd in (z["to"], z["from"]):
        try:
            os.close(fd)
        except OSError:
            pass
    timed_out = False
    got, status, usage = os.wait4(pid, os.WNOHANG)
    if got != pid:
        left = deadline - time.monotonic()
        if left > 0:
            status, usage, timed_out = wait(pid, left)
        else:
            timed_out = True
            for p in (pid, z.get("child")):
                if p:
                    try:
                        os.killpg(p, signal.SIGKILL)
                    except OSError:
                        pass
            _, status, usage = os.wait4(pid, 0)
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    rc = os.WEXITSTATUS(status) if os.WIFEXITED(status) and not timed_out else None
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) and not timed_out else None
    return {"rc": rc, "signal": sig, "timed_out": timed_out, "utime": usage.ru_utime,
            "stime": usage.ru_stime}, "no zygote"


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
    global ZYGOTE_MAX
    ZYGOTE_MAX = int(first.get("zygotes", ZYGOTE_MAX))
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
        got = None
        try:
            got = zygote_run(req, before, started)
        except Exception:
            for key in list(ZYGOTES):
                zygote_drop(key)
        if got is not None:
            msg, via = got
            rc, sig, timed_out = msg.get("rc"), msg.get("signal"), bool(msg.get("timed_out"))
            utime, stime = msg.get("utime") or 0.0, msg.get("stime") or 0.0
        else:
            via = "plain"
            pid = os.fork()
            if pid == 0:
                try:
                    child(req, before)
                finally:
                    os._exit(70)
            status, usage, timed_out = wait(pid, req["timeout"])
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            rc = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
            sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
            utime, stime = usage.ru_utime, usage.ru_stime
        elapsed = time.monotonic() - started
        take_code()
        try:
            with open(req["times"], "w") as f:
                f.write("0m0.000s 0m0.000s\n0m%.3fs 0m%.3fs\n" % (utime, stime))
        except OSError:
            pass
        # `keep`: the zygotes, which whoever reaps this run's processes spares.
        PROTO_OUT.write(json.dumps({
            "rc": rc, "signal": sig, "timed_out": timed_out, "elapsed": elapsed,
            "cpu_s": utime + stime, "via": via,
            "keep": [z["pid"] for z in ZYGOTES.values()]}).encode() + b"\n")

main()
