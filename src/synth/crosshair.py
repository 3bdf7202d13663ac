# swe-forge symbolic search: when neither the recorded inputs nor Hypothesis tell a bug
# apart, ask CrossHair (`crosshair diffbehavior`) to compare the clean and the buggy version
# of one function by symbolic execution. Runs in the tree WITH the bug, like search.py.
#
#   python crosshair.py REQUEST.json OUT.json
#
# REQUEST: {"module", "clean_source", "file", "qualname", "receiver", "args", "seconds",
#           "scratch"}
# `args` is a recorded call's argument text (or null when the function was never called):
# its values give the parameters' type annotations, which CrossHair needs to make symbolic
# inputs of the right types. Both versions are wrapped in plain annotated functions written to
# a module in the scratch directory, and CrossHair compares the two wrappers.
# OUT: {"found": [{"qualname", "receiver", "args", "imports"}], "exhausted": bool,
#       "iterations": N, "error": str|null}
# "exhausted" is CrossHair's "All paths exhausted": the versions agree on every path it could
# find, which is evidence that the mutant is equivalent. The finds are only proposals: the
# engine replays them on the clean and the buggy tree before it writes a test.

import datetime as dt
import decimal
import fractions
import importlib
import inspect
import json
import os
import re
import subprocess
import sys

import swe_forge_literal as literal

TARGETS = "swe_forge_ch_targets"


def type_expr(value, depth=0):
    """An annotation for values like `value`, or None when none is simple enough."""
    t = type(value)
    simple = {bool: "bool", int: "int", float: "float", str: "str", bytes: "bytes",
              decimal.Decimal: "decimal.Decimal", fractions.Fraction: "fractions.Fraction",
              dt.date: "datetime.date", dt.datetime: "datetime.datetime",
              dt.timedelta: "datetime.timedelta"}
    if t in simple:
        return simple[t]
    if value is None:
        return "None"
    if depth >= 2:
        return None
    if t in (list, set, frozenset):
        items = list(value)
        inner = type_expr(items[0], depth + 1) if items else None
        if inner is None or any(type_expr(v, depth + 1) != inner for v in items[1:]):
            return None
        return "%s[%s]" % (t.__name__, inner)
    if t is tuple and value:
        parts = [type_expr(v, depth + 1) for v in value]
        if None in parts:
            return None
        return "tuple[%s]" % ", ".join(parts)
    if t is dict and value:
        ks = {type_expr(k, depth + 1) for k in value}
        vs = {type_expr(v, depth + 1) for v in value.values()}
        if len(ks) != 1 or len(vs) != 1 or None in ks or None in vs:
            return None
        return "dict[%s, %s]" % (ks.pop(), vs.pop())
    return None


def annotations(fn, args_text, namespace):
    """(names, annotation per name or None) for the positional parameters to search."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = [p for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    values = {}
    if args_text:
        args, kwargs = literal.call_args(args_text, namespace)
        for p, v in zip(params, args):
            values[p.name] = v
        values.update(kwargs)
    names, annots = [], []
    for p in params:
        if p.name in values:
            ann = type_expr(values[p.name])
        elif p.default is not p.empty:
            # Never passed: leave it at its default (fewer symbolic inputs).
            break
        elif p.annotation is not p.empty and isinstance(p.annotation, type):
            ann = type_expr(p.annotation()) if p.annotation in (int, str, float, bool) else None
        else:
            ann = None
        names.append(p.name)
        annots.append(ann)
    return names, annots


def write_targets(path, req, names, annots):
    params = ", ".join(n if a is None else "%s: %s" % (n, a) for n, a in zip(names, annots))
    call = ", ".join(names)
    src = [
        "import datetime, decimal, fractions, importlib, importlib.util, json",
        "import swe_forge_literal as _literal",
        "_req = json.load(open(%r))" % req["_path"],
        "_buggy = importlib.import_module(_req['module'])",
        "_spec = importlib.util.spec_from_loader(_req['module'], loader=None)",
        "_clean = importlib.util.module_from_spec(_spec)",
        "_clean.__file__ = getattr(_buggy, '__file__', None)",
        "_clean.__package__ = _buggy.__package__",
        "exec(compile(_req['clean_source'], _req['file'], 'exec'), _clean.__dict__)",
        "def _bound(mod):",
        "    if _req.get('receiver'):",
        "        obj = _literal.eval_source(_req['receiver'], vars(mod))",
        "        return getattr(obj, _req['qualname'].split('.', 1)[1])",
        "    fn = mod",
        "    for part in _req['qualname'].split('.'):",
        "        fn = getattr(fn, part)",
        "    return fn",
        "def clean(%s):" % params,
        "    return _bound(_clean)(%s)" % call,
        "def buggy(%s):" % params,
        "    return _bound(_buggy)(%s)" % call,
        "",
    ]
    with open(path, "w") as f:
        f.write("\n".join(src))


GIVEN = re.compile(r"^Given: \((.*)\),\s*$")


def outcome(fn, kwargs):
    try:
        return ("value", repr(fn(**kwargs)))
    except Exception as e:
        return ("raised", type(e).__name__, str(e))


def readable(value):
    """`value` with the characters of its strings made printable letters (CrossHair likes
    control characters); containers are rewritten item by item."""
    if isinstance(value, str):
        return "".join(c if c.isprintable() and c.isascii() else chr(ord("a") + ord(c) % 26)
                       for c in value)
    if type(value) in (list, tuple):
        return type(value)(readable(v) for v in value)
    if type(value) is dict:
        return {readable(k): readable(v) for k, v in value.items()}
    return value


def simplify(clean_fn, buggy_fn, kwargs):
    """Make each argument readable when the versions still differ on the result."""
    out = dict(kwargs)
    for k, v in kwargs.items():
        r = readable(v)
        if r == v:
            continue
        trial = dict(out, **{k: r})
        if outcome(clean_fn, trial) != outcome(buggy_fn, trial):
            out = trial
    return out


def main():
    req_path, out_path = sys.argv[1], sys.argv[2]
    req = json.load(open(req_path))
    req["_path"] = req_path
    out = {"found": [], "exhausted": False, "iterations": 0, "error": None}
    try:
        buggy = importlib.import_module(req["module"])
        fn = buggy
        if req.get("receiver"):
            fn = getattr(literal.eval_source(req["receiver"], vars(buggy)),
                         req["qualname"].split(".", 1)[1])
        else:
            for part in req["qualname"].split("."):
                fn = getattr(fn, part)
        found = annotations(fn, req.get("args"), vars(buggy))
        if found is None or not found[0]:
            out["error"] = "no parameters to search"
            json.dump(out, open(out_path, "w"))
            return
        names, annots = found
        with open(req_path, "w") as f:
            json.dump(req, f)
        write_targets(os.path.join(req["scratch"], TARGETS + ".py"), req, names, annots)
        seconds = float(req.get("seconds", 5))
        env = dict(os.environ)
        env["PYTHONPATH"] = req["scratch"] + os.pathsep + env.get("PYTHONPATH", "")
        sys.path.insert(0, req["scratch"])
        proc = subprocess.run(
            [sys.executable, "-m", "crosshair", "diffbehavior",
             "--per_condition_timeout", str(seconds),
             TARGETS + ".clean", TARGETS + ".buggy"],
            capture_output=True, text=True, timeout=seconds * 4 + 30, env=env,
        )
    except subprocess.TimeoutExpired:
        out["error"] = "crosshair did not finish in time"
        json.dump(out, open(out_path, "w"))
        return
    except Exception as e:
        out["error"] = "%s: %s" % (type(e).__name__, e)
        json.dump(out, open(out_path, "w"))
        return
    text = proc.stdout
    m = re.search(r"attempted (\d+) iterations", text)
    if m:
        out["iterations"] = int(m.group(1))
    out["exhausted"] = "All paths exhausted" in text
    for line in text.splitlines():
        g = GIVEN.match(line)
        if not g:
            continue
        # CrossHair prints the arguments as `name=repr`; keep them only if they read back
        # as plain values (the engine replays the call before it believes it).
        args_text = "(" + g.group(1) + ")"
        try:
            args, kwargs = literal.call_args(args_text, vars(buggy))
            targets = importlib.import_module(TARGETS)
            kwargs = simplify(targets.clean, targets.buggy, kwargs)
            imports = set()
            parts = ["%s=%s" % (k, literal.to_source(v, imports, {req["module"]}))
                     for k, v in kwargs.items()]
        except Exception:
            continue
        out["found"].append({
            "qualname": req["qualname"],
            "receiver": req.get("receiver"),
            "args": "(" + ", ".join(parts) + ")",
            "imports": sorted(imports),
        })
        break
    if not out["found"] and proc.returncode not in (0, 1):
        out["error"] = "crosshair exited %d: %s" % (
            proc.returncode, (proc.stderr.strip().splitlines() or [""])[-1])
    json.dump(out, open(out_path, "w"))


if __name__ == "__main__":
    main()
