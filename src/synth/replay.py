# swe-forge replay: call recorded inputs against the repository as it is now (clean or with
# a bug) and write what each call did.
#
#   python replay.py CALLS.json OUT.json
#
# CALLS.json: [{"id", "module", "qualname", "receiver", "args"}] (see trace.py). Each call
# runs twice; a call whose two outcomes differ is marked nondeterministic. An outcome is one
# of {"kind": "value", "source": <Python source or null>, "repr": ..., "imports": [...],
# "attrs": {name: source} (an object of the repository's classes with no source: its public
# attributes that can be written back)},
# {"kind": "raised", "type": ..., "type_module": ..., "message": ..., "attrs": {...} and
# "imports" (an exception of the repository's classes: its public attributes, as for values)},
# {"kind": "timeout"} or {"kind": "error", "detail": ...} (the call could not be made).

import importlib
import json
import os
import signal
import sys

import swe_forge_literal as literal

CALL_SECONDS = 2


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _target(call):
    module = importlib.import_module(call["module"])
    namespace = vars(module)
    args, kwargs = literal.call_args(call["args"], namespace)
    if call.get("receiver"):
        obj = literal.eval_source(call["receiver"], namespace)
        method = call["qualname"].split(".", 1)[1]
        return literal.through_syntax(obj, method), args, kwargs, module
    fn = module
    for part in call["qualname"].split("."):
        fn = getattr(fn, part)
    return fn, args, kwargs, module


def _outcome(call, repo_modules):
    try:
        fn, args, kwargs, module = _target(call)
    except Exception as e:
        return {"kind": "error", "detail": "%s: %s" % (type(e).__name__, e)}
    signal.setitimer(signal.ITIMER_REAL, CALL_SECONDS)
    try:
        value = fn(*args, **kwargs)
    except _Timeout:
        return {"kind": "timeout"}
    except Exception as e:
        return _raised(e, repo_modules, module)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    imports = set()
    try:
        source = literal.to_source(value, imports, repo_modules)
        again = literal.eval_source(source, vars(module))
        if not (again == value) or type(again) is not type(value):
            source = None
    except literal.Refused:
        source = None
    except Exception:
        source = None
    try:
        text = repr(value)[:300]
    except Exception:
        text = "<unprintable>"
    attrs = _attrs(value, repo_modules, module, imports) if source is None else None
    out = {"kind": "value", "source": source, "repr": text, "imports": sorted(imports)}
    if attrs:
        out["attrs"] = attrs
    return out


MAX_ATTRS = 12


def _raised(e, repo_modules, module):
    """The outcome of a call that raised `e`; an exception of the repository's classes also
    carries its public attributes (marshmallow's `ValidationError.valid_data`), by which two
    exceptions with one message are told apart."""
    t = type(e)
    out = {"kind": "raised", "type": t.__qualname__, "type_module": t.__module__,
           "message": str(e)[:500]}
    imports = set()
    try:
        attrs = _attrs(e, repo_modules, module, imports)
    except Exception:
        attrs = None
    if attrs:
        out["attrs"] = attrs
        out["imports"] = sorted(imports)
    return out


def _attrs(value, repo_modules, module, imports):
    """The public attributes of an object of the repository's classes that can be written back
    as source (`{"metadata": "{'a': 1}"}`), or None: an object whose repr hides its state
    (boltons' `Table` shows no metadata) can still be told apart by them."""
    t = type(value)
    if getattr(t, "__module__", None) not in repo_modules:
        return None
    state = getattr(value, "__dict__", None)
    if not isinstance(state, dict):
        return None
    out = {}
    for name in sorted(state):
        if len(out) >= MAX_ATTRS:
            break
        item = state[name]
        if not isinstance(name, str) or name.startswith("_") or callable(item):
            continue
        used = set()
        try:
            src = literal.to_source(item, used, repo_modules)
            again = literal.eval_source(src, vars(module))
            if not (again == item) or type(again) is not type(item):
                continue
        except Exception:
            continue
        out[name] = src
        imports.update(used)
    return out or None


def _value_outcome(fn, args, kwargs, module, repo_modules):
    signal.setitimer(signal.ITIMER_REAL, CALL_SECONDS)
    try:
        value = fn(*args, **kwargs)
    except _Timeout:
        return {"kind": "timeout"}
    except Exception as e:
        return _raised(e, repo_modules, module)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    imports = set()
    try:
        source = literal.to_source(value, imports, repo_modules)
        again = literal.eval_source(source, vars(module))
        if not (again == value) or type(again) is not type(value):
            source = None
    except Exception:
        source = None
    try:
        text = repr(value)[:300]
    except Exception:
        text = "<unprintable>"
    attrs = _attrs(value, repo_modules, module, imports) if source is None else None
    out = {"kind": "value", "source": source, "repr": text, "imports": sorted(imports)}
    if attrs:
        out["attrs"] = attrs
    return out


def _scenario(call, repo_modules):
    """Construct the object, then make each step; the outcome of every step."""
    sc = call["scenario"]
    try:
        module = importlib.import_module(sc["module"])
        cls = getattr(module, sc["cls"])
        args, kwargs = literal.eval_source("(lambda *a, **k: (a, k))" + sc["ctor_args"], vars(module))
        obj = cls(*args, **kwargs)
    except Exception as e:
        return {"kind": "error", "detail": "constructing: %s: %s" % (type(e).__name__, e)}
    steps = []
    for step in sc["steps"]:
        try:
            fn = literal.through_syntax(obj, step["method"])
            a, k = literal.call_args(step["args"], vars(module))
        except Exception as e:
            steps.append({"kind": "error", "detail": "%s: %s" % (type(e).__name__, e)})
            break
        steps.append(_value_outcome(fn, a, k, module, repo_modules))
    return {"kind": "scenario", "steps": steps}


_ROOT = os.getcwd()


def _scrubbed(outcome):
    """`outcome` without this machine's paths: a message holding one is left out (a test's
    `match=` on it would fail where the repository lives elsewhere), a repr shows the path
    repository-relative, as a user's report would."""
    if outcome.get("kind") == "scenario":
        return dict(outcome, steps=[_scrubbed(s) for s in outcome["steps"]])
    if outcome.get("kind") == "raised" and literal._machine_path(outcome.get("message") or ""):
        return dict(outcome, message="")
    if outcome.get("kind") == "value" and literal._machine_path(outcome.get("repr") or ""):
        text = outcome["repr"].replace(_ROOT + "/", "").replace(_ROOT, ".")
        return dict(outcome, repr=text)
    return outcome


def main():
    calls = json.load(open(sys.argv[1]))
    signal.signal(signal.SIGALRM, _alarm)
    sys.setrecursionlimit(5000)
    results = {}
    for call in calls:
        try:
            importlib.import_module(call["module"])
        except Exception as e:
            results[call["id"]] = {"kind": "error", "detail": "import: %s" % e}
            continue
        repo_modules = {call["module"]} | {
            m for m in sys.modules if m.split(".")[0] == call["module"].split(".")[0]
        }
        run = _scenario if call.get("scenario") else _outcome
        first = _scrubbed(run(call, repo_modules))
        second = _scrubbed(run(call, repo_modules))
        if json.dumps(first, sort_keys=True) != json.dumps(second, sort_keys=True):
            first = dict(first, nondeterministic=True)
        results[call["id"]] = first
    with open(sys.argv[2], "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
