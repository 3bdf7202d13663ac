# swe-forge call tracer: a pytest plugin (`-p swe_forge_trace`) loaded while the clean
# repository's test suite runs. It records calls of functions defined in the repository's
# source files (SWE_FORGE_TRACE_FILES: JSON list of repository-relative paths): the
# arguments, when they can be written back as Python source (swe_forge_literal), and, for
# each recorded call, which repository functions it reached (itself, its callees and theirs).
# Results are not recorded here: replay.py computes them on the clean and the buggy code.
#
# SWE_FORGE_TRACE_TESTS (optional): a file of the node ids to run, one per line; the others
# are deselected.
#
# Output: SWE_FORGE_TRACE_OUT, JSON {"calls": [{"file", "module", "qualname", "args",
# "reaches": [...]}], "dropped": N}. At most SWE_FORGE_TRACE_PER_FUNCTION (default 40)
# distinct argument lists per function, from at most SWE_FORGE_TRACE_ATTEMPTS (default 200)
# of its calls.

import json
import os
import sys
import threading

import pytest
import swe_forge_literal as literal

_ROOT = os.path.realpath(os.getcwd())
_FILES = {
    os.path.realpath(os.path.join(_ROOT, f)): f
    for f in json.loads(os.environ.get("SWE_FORGE_TRACE_FILES", "[]"))
}
_PER_FUNCTION = int(os.environ.get("SWE_FORGE_TRACE_PER_FUNCTION", "40"))
# Calls per function whose arguments are tried as source; after that the function's calls
# are only followed (what they reach), not written back: a function whose arguments never can
# be (a method of an object that is not a literal) would otherwise pay for the attempt on every
# one of its calls, which made tracing a real suite many times slower than running it.
_ATTEMPTS = int(os.environ.get("SWE_FORGE_TRACE_ATTEMPTS", "200"))
_attempts = {}
_OUT = os.environ.get("SWE_FORGE_TRACE_OUT", "trace.json")

_code_info = {}  # code object -> None (not ours) or (file, module, qualname)
_calls = {}  # (file, qualname, args) -> record
_per_function = {}
_stack = []  # [(frame, key or None, reaches set or None, fid)]
_dropped = [0]
# Objects that cannot be written back as source (a ledger with history) are followed as
# scenarios: the constructor call, then each method called on the object from outside it.
_scenarios = {}  # id(obj) -> scenario dict
_scenario_objects = []  # keeps the objects alive so ids are not reused
_SCENARIOS_PER_CLASS = int(os.environ.get("SWE_FORGE_TRACE_SCENARIOS", "40"))
_scenario_count = {}
_busy = [False]
_UNSEEN = object()
_spent = set()  # function ids whose arguments are no longer tried
_open = {}  # class name -> its scenarios still open
_live = []  # reach sets of the recording calls on the stack, innermost last
# Calls (and generator resumptions) traced per test: past this many the test runs untraced.
# more-itertools' `test_primes` resumes its generators 93 million times (14 s plain, 95 s
# traced, for calls recorded in its first moments); a test rarely makes 100,000.
_EVENTS_PER_TEST = int(os.environ.get("SWE_FORGE_TRACE_EVENTS_PER_TEST", "500000"))
_events = [0]
_capped = set()  # node ids of the tests that ran past the budget
# Special methods a user calls through syntax (`v(x)`, `m[k]`, `k in m`, `len(m)`, `repr(m)`):
# steps of a scenario like public methods (the test writes them as that syntax). Other private
# methods end the scenario: a test calls what users call.
_DUNDER_STEPS = {
    "__call__", "__getitem__", "__contains__", "__len__", "__repr__", "__str__", "__eq__",
    "__setitem__", "__delitem__",
}


def _info(frame):
    """(file, module, qualname, function id, fast-path class) of a frame's code when it is a
    named function of the repository's source files, else None; cached per code object."""
    code = frame.f_code
    rel = _FILES.get(os.path.realpath(code.co_filename)) if code.co_filename else None
    info = None
    if rel is not None:
        qualname = getattr(code, "co_qualname", code.co_name)
        if "<" not in qualname:  # not a lambda, comprehension, local function or module body
            cls = qualname.split(".")[0] if qualname.count(".") == 1 else None
            info = (rel, frame.f_globals.get("__name__", ""), qualname, rel + "::" + qualname, cls)
    _code_info[code] = info
    return info


def _call_source(frame, qualname):
    """(receiver source or None, `(args)` source, imports) of this call, or None. Methods:
    the receiver is `self` written back as source (`Period(...)`). Raises literal.Refused."""
    code = frame.f_code
    receiver = None
    imports = set()
    if "." in qualname:
        if qualname.count(".") != 1 or code.co_argcount == 0 or code.co_varnames[0] != "self":
            return None
        receiver = literal.to_source(frame.f_locals["self"], imports, _repo_modules())
        if literal.is_attribute(type(frame.f_locals["self"]), qualname.split(".")[1]):
            # A property: its getter is read (`signer.secret_key`); a setter is not replayed.
            if code.co_argcount != 1:
                return None
            return receiver, literal.ATTRIBUTE, sorted(imports)
    args = _args_source(frame, qualname, 1 if receiver is not None else 0)
    if args is None:
        return None
    return receiver, args[0], sorted(imports | set(args[1]))


_defaults_cache = {}


def _defaults(frame, qualname):
    code = frame.f_code
    if code in _defaults_cache:
        return _defaults_cache[code]
    obj = frame.f_globals
    fn = None
    try:
        parts = qualname.split(".")
        fn = obj.get(parts[0])
        for p in parts[1:]:
            fn = getattr(fn, p)
        fn = getattr(fn, "__func__", fn)
        if getattr(fn, "__code__", None) is not code:
            fn = None
    except Exception:
        fn = None
    d = getattr(fn, "__defaults__", None) or ()
    _defaults_cache[code] = d
    return d


_repo_modules_cache = [None, 0]


def _repo_modules():
    n = len(sys.modules)
    if _repo_modules_cache[0] is None or _repo_modules_cache[1] != n:
        mods = set()
        for name, m in list(sys.modules.items()):
            f = getattr(m, "__file__", None)
            if f and os.path.realpath(f) in _FILES:
                mods.add(name)
        _repo_modules_cache[0] = mods
        _repo_modules_cache[1] = n
    return _repo_modules_cache[0]


def _local(frame, event, arg):
    if event == "return" and _stack and _stack[-1][0] is frame:
        if _stack.pop()[2] is not None:
            _live.pop()
    return _local


def _global(frame, event, arg, _known=_code_info.get):
    """sys.settrace's callback, called at each Python function call (not at builtin calls,
    as a profile function would be). Foreign code costs a dict lookup; a function of ours
    whose arguments are no longer tried costs the same while no recording call is on the
    stack and no scenario of its class is open. Frames it keeps get no line events: only
    their return, which pops them. A test past its budget of calls runs untraced from there."""
    _events[0] += 1
    if _events[0] > _EVENTS_PER_TEST:
        sys.settrace(None)
        return None
    info = _known(frame.f_code, _UNSEEN)
    if info is None:
        return None
    if info is _UNSEEN:
        info = _info(frame)
        if info is None:
            return None
    if _busy[0]:
        return None
    rel, module, qualname, fid, cls = info
    for reaches in _live:
        reaches.add(fid)
    if fid in _spent and (cls is None or not _open.get(cls)):
        # Neither recorded nor followed: what it reaches is added to the recording calls
        # around it as its callees' calls come, so its frame needs no tracking of its own
        # (more-itertools' `test_primes` makes millions of such calls inside recorded ones).
        return None
    key = None
    reaches = None
    _busy[0] = True
    try:
        scenario_reaches = _follow(frame, rel, module, qualname)
        if scenario_reaches is not None:
            scenario_reaches.add(fid)
            reaches = scenario_reaches
        elif _per_function.get(fid, 0) < _PER_FUNCTION and _attempts.get(fid, 0) < _ATTEMPTS:
            _attempts[fid] = _attempts.get(fid, 0) + 1
            try:
                src = _call_source(frame, qualname)
            except literal.Refused:
                src = None
            except Exception:
                src = None
            if src is not None:
                key = (fid, src[0], src[1])
                record = _calls.get(key)
                if record is None:
                    _per_function[fid] = _per_function.get(fid, 0) + 1
                    record = {
                        "file": rel,
                        "module": module,
                        "qualname": qualname,
                        "receiver": src[0],
                        "args": src[1],
                        "imports": src[2],
                        "reaches": set([fid]),
                    }
                    _calls[key] = record
                reaches = record["reaches"]
            else:
                _dropped[0] += 1
        else:
            _dropped[0] += 1
        if (
            _per_function.get(fid, 0) >= _PER_FUNCTION or _attempts.get(fid, 0) >= _ATTEMPTS
        ) and (
            cls is None
            or not qualname.endswith(".__init__")
            or _scenario_count.get(qualname, 0) >= _SCENARIOS_PER_CLASS
        ):
            _spent.add(fid)
    finally:
        _busy[0] = False
    _stack.append((frame, key, reaches, id(frame.f_locals.get("self")) if "." in qualname else None))
    if reaches is not None:
        _live.append(reaches)
    frame.f_trace_lines = False
    return _local


def _close(sc):
    if sc["open"]:
        sc["open"] = False
        _open[sc["cls"]] -= 1


def _follow(frame, rel, module, qualname):
    """Record a scenario step when this is a method call on a followed (or new) object; the
    scenario's reach set, or None."""
    if qualname.count(".") != 1:
        return None
    cls, method = qualname.split(".")
    code = frame.f_code
    if code.co_argcount == 0 or code.co_varnames[0] != "self":
        return None
    obj = frame.f_locals.get("self")
    if obj is None:
        return None
    oid = id(obj)
    if method == "__init__":
        if type(obj).__name__ != cls or _scenario_count.get(qualname, 0) >= _SCENARIOS_PER_CLASS:
            return None
        try:
            src = _args_source(frame, qualname, 1)
        except Exception:
            return None
        if src is None:
            return None
        _scenario_count[qualname] = _scenario_count.get(qualname, 0) + 1
        # Written back as this constructor call when passed to a call or called on later.
        literal.CONSTRUCTED[oid] = (module, cls, src[0], src[1])
        sc = {
            "file": rel, "module": module, "cls": cls, "ctor_args": src[0],
            "imports": set(src[1]), "steps": [], "open": True, "reaches": set(),
        }
        old = _scenarios.get(oid)
        if old is not None:
            _close(old)
        _scenarios[oid] = sc
        _open[cls] = _open.get(cls, 0) + 1
        _scenario_objects.append(obj)
        return sc["reaches"]
    sc = _scenarios.get(oid)
    if sc is None or type(obj).__name__ != sc["cls"]:
        return None
    # Only calls from outside the object: not while one of its own methods runs.
    if any(entry[3] == oid for entry in _stack):
        return None
    if not sc["open"] or (method.startswith("_") and method not in _DUNDER_STEPS) or len(sc["steps"]) >= 12:
        _close(sc)
        return None
    try:
        if literal.is_attribute(type(obj), method):
            # A property's getter is a step that reads it; its setter cannot be replayed.
            src = (literal.ATTRIBUTE, []) if code.co_argcount == 1 else None
        else:
            src = _args_source(frame, qualname, 1)
    except Exception:
        src = None
    if src is None:
        _close(sc)  # the sequence can no longer be replayed past this point
        return None
    sc["steps"].append({"method": method, "args": src[0]})
    sc["imports"].update(src[1])
    return sc["reaches"]


def _args_source(frame, qualname, start):
    """(`(args)` source of the parameters from `start` on, imports), or None when one cannot
    be written back as source. Trailing parameters still holding their default object were
    (most likely) not passed: they are left out, so the call reads as written (the search
    varies them from the signature)."""
    code = frame.f_code
    f_locals = frame.f_locals
    names = code.co_varnames
    npos = code.co_argcount
    nkw = code.co_kwonlyargcount
    flags = code.co_flags
    imports = set()
    repo_modules = _repo_modules()
    defaults = _defaults(frame, qualname)
    last = npos
    if defaults:
        first_default = npos - len(defaults)
        while last > max(start, first_default) and f_locals[names[last - 1]] is defaults[last - 1 - first_default]:
            last -= 1
    try:
        parts = [literal.to_source(f_locals[n], imports, repo_modules) for n in names[start:last]]
        i = npos + nkw
        if flags & 0x04:  # *args
            parts += [literal.to_source(v, imports, repo_modules) for v in f_locals[names[i]]]
            i += 1
        parts += [
            "%s=%s" % (n, literal.to_source(f_locals[n], imports, repo_modules))
            for n in names[npos : npos + nkw]
        ]
        if flags & 0x08:  # **kwargs
            for k, v in f_locals[names[i]].items():
                if not k.isidentifier():
                    return None
                parts.append("%s=%s" % (k, literal.to_source(v, imports, repo_modules)))
    except literal.Refused:
        return None
    text = "(" + ", ".join(parts) + ")"
    if len(text) > literal.MAX_SOURCE:
        return None
    return text, sorted(imports)


def _on(reset):
    del _stack[:]
    del _live[:]
    if reset:
        _events[0] = 0
    if _events[0] > _EVENTS_PER_TEST:
        return
    sys.settrace(_global)
    threading.settrace(_global)


def _off():
    sys.settrace(None)
    threading.settrace(None)


# Tracing is on only while a test's fixtures are set up and while it runs: pytest's start,
# collection (imports), reporting and teardown run untraced. On boltons' suite (519 tests,
# 2.6 s CPU plain) that took the tracer from 6.4-7.2 s to 4.6-4.9 s CPU, for 2,581 of the
# 2,687 calls it recorded traced throughout (the others ran while modules were imported).
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    _on(True)
    try:
        yield
    finally:
        _off()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    _on(False)
    try:
        yield
    finally:
        _off()
        if _events[0] > _EVENTS_PER_TEST:
            _capped.add(item.nodeid)


_SELECT = os.environ.get("SWE_FORGE_TRACE_TESTS")


def pytest_collection_modifyitems(session, config, items):
    # Only the tests swe-forge asked for (SWE_FORGE_TRACE_TESTS: node ids, one per line):
    # those that reach the survivors' functions.
    if not _SELECT:
        return
    with open(_SELECT) as f:
        wanted = {line.rstrip("\n") for line in f if line.strip()}
    keep = [item for item in items if item.nodeid in wanted]
    if len(keep) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in wanted])
        items[:] = keep


def pytest_runtest_logfinish(nodeid, location):
    # An object a test made is not followed into the next test: its scenario ends with it.
    for sc in _scenarios.values():
        _close(sc)


def pytest_unconfigure(config):
    _off()
    calls = []
    for record in _calls.values():
        record = dict(record)
        record["reaches"] = sorted(record["reaches"])
        calls.append(record)
    scenarios = []
    seen = set()
    for sc in _scenarios.values():
        # A construction no method followed is kept too (once per constructor call): it is a
        # receiver for the methods no test calls.
        key = json.dumps([sc["file"], sc["cls"], sc["ctor_args"], sc["steps"]], sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        scenarios.append({
            "file": sc["file"], "module": sc["module"], "cls": sc["cls"],
            "ctor_args": sc["ctor_args"], "imports": sorted(sc["imports"]),
            "steps": sc["steps"], "reaches": sorted(sc["reaches"]),
        })
    with open(_OUT, "w") as f:
        json.dump({"calls": calls, "dropped": _dropped[0], "scenarios": scenarios,
                   "capped_tests": sorted(_capped)}, f)
