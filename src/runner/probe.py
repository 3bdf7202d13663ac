# swe-forge's probe: a pytest plugin loaded in every pytest run swe-forge makes (`-p
# swe_forge_probe` in a fresh process, a plugin object in the resident runner's child). It
# observes, and keeps a mass of failures cheap to report (below). For each test it notes whether the test drew random numbers that nothing in the
# test had seeded, and says so in the JUnit XML report as the test case's property
# `swe_forge_nondeterministic`:
#   - `random`: the global `random` generator moved during the test (setup, call, teardown)
#     while the test never seeded it (`random.seed(x)` or `random.setstate(s)`): its draws
#     come from a state seeded by the OS, or by whatever ran before it;
#   - `random-instance`: the repository's code or its tests made a `random.Random()` or a
#     `random.SystemRandom()` seeded by the OS.
# A test that fails with the bug for such a reason may pass the next time (a cache that
# evicts with `random.choice`): swe-forge does not grade a task by it.
# It also notes, as the property `swe_forge_indirect`, a test that could depend on code it
# does not run in its own process under the tracer: it started another process (`process`:
# subprocess, fork, exec, spawn, system), read a Python file of the repository as data
# (`source`: `inspect.getsource`, `linecache`, a plain `open`), or set a tracer or profiler
# (`trace`: the coverage tracer may have missed lines while it ran). Per-test coverage cannot
# see what such a test depends on; every other test depends only on the lines it ran. Seen
# through an audit hook (Python >= 3.8), from the test's setup to its teardown.
# Where the run gives budgets (`SWE_FORGE_TEST_BUDGETS`: a JSON object from a test file to
# the seconds any one of its tests may take, setup to teardown), a watchdog thread ends the
# run at the first test past its file's budget: it writes `<seconds>\t<test id>` to
# `over-budget.txt` beside the JUnit report and exits (status 124), so a wait that is never
# signalled or an endless loop costs about its budget, not the whole run's limit.
import json
import os
import random
import sys
import threading
import time

import pytest

_ROOT = os.path.realpath(os.getcwd())
_state = {"start": None, "seeded": False, "instance": False, "active": False}
_original_seed = random.Random.seed
_original_setstate = random.Random.setstate
_original_system_seed = random.SystemRandom.seed


def _from_repository(depth):
    """Whether the frame `depth` levels up runs a file of the repository."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return False
    while frame is not None:
        name = frame.f_code.co_filename or ""
        if name.startswith("<") or name == __file__:
            frame = frame.f_back
            continue
        path = os.path.realpath(name)
        return path == _ROOT or path.startswith(_ROOT + os.sep) and "site-packages" not in path
    return False


def _seed(self, a=None, *args, **kwargs):
    if _state["active"]:
        if self is random._inst:
            if a is not None:
                _state["seeded"] = True
        elif a is None and _from_repository(3):
            # `Random()` → `Random.__init__` → here: its caller made an OS-seeded generator.
            _state["instance"] = True
    return _original_seed(self, a, *args, **kwargs)


def _setstate(self, state):
    if _state["active"] and self is random._inst:
        _state["seeded"] = True
    return _original_setstate(self, state)


def _system_seed(self, *args, **kwargs):
    if _state["active"] and _from_repository(3):
        _state["instance"] = True
    return _original_system_seed(self, *args, **kwargs)


try:
    random.Random.seed = _seed
    random.Random.setstate = _setstate
    random.SystemRandom.seed = _system_seed
    # The module's functions are bound methods of the global generator, bound at import.
    random.seed = random._inst.seed
    random.setstate = random._inst.setstate
except Exception:  # an observer never breaks a run
    pass


_PROCESS_EVENTS = frozenset((
    "subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.spawn",
    "os.system", "os.startfile", "pty.spawn",
))
_TRACE_EVENTS = frozenset(("sys.settrace", "sys.setprofile"))
_indirect = {"what": None}


def _audit(event, args):
    if not _state["active"] or _indirect["what"] == "process":
        return
    try:
        if event in _PROCESS_EVENTS:
            _indirect["what"] = "process"
        elif event in _TRACE_EVENTS:
            _indirect["what"] = "trace"
        elif event == "open" and _indirect["what"] is None and args:
            path = args[0]
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            mode = args[1] if len(args) > 1 else "r"
            if (isinstance(path, str) and path.endswith(".py")
                    and (mode is None or "r" in str(mode))):
                real = os.path.realpath(path)
                if real.startswith(_ROOT + os.sep) and "site-packages" not in real:
                    _indirect["what"] = "source"
    except Exception:  # an observer never breaks a run
        pass


try:
    sys.addaudithook(_audit)
except Exception:
    pass


try:
    _BUDGETS = json.loads(os.environ.get("SWE_FORGE_TEST_BUDGETS") or "{}")
    if not isinstance(_BUDGETS, dict):
        _BUDGETS = {}
except Exception:
    _BUDGETS = {}
OVER_BUDGET = "over-budget.txt"
_watch = {"deadline": None, "test": None, "budget": None, "dir": None, "thread": None}
_watch_cond = threading.Condition()


def pytest_configure(config):
    try:
        path = getattr(config.option, "xmlpath", None)
        if path:
            _watch["dir"] = os.path.dirname(os.path.abspath(path))
    except Exception:
        pass


def _over_budget(test, budget):
    try:
        if _watch["dir"]:
            with open(os.path.join(_watch["dir"], OVER_BUDGET), "w") as f:
                f.write("%.3f\t%s\n" % (budget, test))
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.write("\nswe-forge: %s ran past its budget of %.1fs\n" % (test, budget))
                stream.flush()
            except Exception:
                pass
    finally:
        os._exit(124)


def _watchdog():
    with _watch_cond:
        while True:
            deadline = _watch["deadline"]
            if deadline is None:
                _watch_cond.wait()
                continue
            left = deadline - time.monotonic()
            if left > 0:
                _watch_cond.wait(left)
                continue
            _over_budget(_watch["test"], _watch["budget"])


def _arm(nodeid):
    budget = _BUDGETS.get(nodeid.split("::")[0])
    if not isinstance(budget, (int, float)) or budget <= 0:
        return
    try:
        with _watch_cond:
            _watch["test"] = nodeid
            _watch["budget"] = float(budget)
            _watch["deadline"] = time.monotonic() + float(budget)
            if _watch["thread"] is None:
                t = threading.Thread(target=_watchdog, name="swe-forge-budget", daemon=True)
                t.start()
                _watch["thread"] = t
            _watch_cond.notify()
    except Exception:  # an observer never breaks a run
        pass


def pytest_runtest_logfinish(nodeid, location):
    if _watch["deadline"] is None:
        return
    try:
        with _watch_cond:
            _watch["deadline"] = None
            _watch_cond.notify()
    except Exception:
        pass


def pytest_runtest_logstart(nodeid, location):
    if _BUDGETS:
        _arm(nodeid)
    try:
        _state["start"] = random._inst.getstate()
    except Exception:
        _state["start"] = None
    _state["seeded"] = False
    _state["instance"] = False
    _indirect["what"] = None
    _state["active"] = True


# A bug that fails thousands of tests (packaging: every test that parses a requirement, when
# the tokenizer loses its position) spent minutes formatting their tracebacks, past the run's
# CPU limit, so a plain kill read as a timeout. After this many failures in a run, the later
# ones are reported in one line each; their messages (the JUnit `message`, what swe-forge
# reads) are the same.
_FULL_TRACEBACKS = 100
_failures = [0]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item, call):
    if call.excinfo is not None and call.when == "call":
        _failures[0] += 1
        if _failures[0] == _FULL_TRACEBACKS + 1:
            try:
                item.config.option.tbstyle = "line"
                item.config.option.showlocals = False
            except Exception:
                pass
    if call.when != "teardown" or not _state["active"]:
        return None
    _state["active"] = False
    what = None
    try:
        moved = _state["start"] is not None and random._inst.getstate() != _state["start"]
        if moved and not _state["seeded"]:
            what = "random"
        elif _state["instance"]:
            what = "random-instance"
    except Exception:
        what = None
    if what is not None:
        item.user_properties.append(("swe_forge_nondeterministic", what))
    if _indirect["what"] is not None:
        item.user_properties.append(("swe_forge_indirect", _indirect["what"]))
    return None
