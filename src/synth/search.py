# swe-forge input search: when no recorded input tells a bug apart, look for one with
# Hypothesis. Runs in the tree WITH the bug; the clean version of the mutated module is
# loaded beside it from its text, so both versions of each entry function can be called in
# one process.
#
#   python search.py REQUEST.json OUT.json
#
# REQUEST: {"module", "clean_source", "file", "templates": [{"qualname", "receiver", "args"}],
#           "seconds", "max_examples"}
# Each template is a recorded call of a function of the mutated module that reached the
# mutated function. Strategies are built from the recorded argument values (same types and
# shapes, nearby numbers, strings over the characters seen) mixed with the function's own
# literals, and Hypothesis `find` shrinks the first input on which the two versions' outcomes
# differ to a small one. OUT: {"found": [{"qualname", "receiver", "args"}], "tried": N}.
# The finds are replayed by replay.py on the clean and the buggy tree before anything is
# written, so this file only proposes inputs.

import datetime as dt
import decimal
import fractions
import importlib
import importlib.util
import json
import re
import signal
import sys
import time
import types

import swe_forge_literal as literal

try:
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis import strategies as st
    from hypothesis.errors import NoSuchExample, Unsatisfiable
except Exception as e:  # hypothesis missing: say so, find nothing
    json.dump({"found": [], "tried": 0, "error": "hypothesis: %s" % e}, open(sys.argv[2], "w"))
    sys.exit(0)


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _consts(fn):
    if isinstance(fn, type):
        # A class is called for its constructor: the constructor's literals.
        fn = getattr(fn, "__init__", None)
    out = set()
    code = getattr(fn, "__code__", None)
    stack = [code] if code else []
    while stack:
        c = stack.pop()
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                stack.append(k)
            elif type(k) in (int, float, str) and not (type(k) is str and len(k) > 40):
                out.add(k)
    return out


def strategy_for(value, consts, depth=0):
    t = type(value)
    same = [k for k in consts if type(k) is t]
    extra = [st.just(value)] + ([st.sampled_from(sorted(same, key=repr))] if same else [])
    if value is None:
        return st.none()
    if t is bool:
        return st.booleans()
    if t is int:
        near = sorted({value + d for d in (-2, -1, 0, 1, 2)} | {k + d for k in same for d in (-1, 0, 1)})
        return st.one_of(*extra, st.sampled_from(near), st.integers(-1000, 1000))
    if t is float:
        return st.one_of(*extra, st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=32),
                         st.sampled_from([0.0, 0.5, 1.0, -1.0, value * 2, value / 2]))
    if t is str:
        chars = set(value) | set("".join(k for k in same)) | set("aZ09 ._-:,")
        # Text is often words: recombine the value's words and the function's literals.
        words = sorted(set(value.split()) | {k for k in same if k and " " not in k})
        options = [st.text(alphabet=sorted(chars), max_size=max(8, len(value) + 4))]
        if words:
            options.append(
                st.lists(st.sampled_from(words), min_size=1, max_size=6).map(" ".join)
            )
        return st.one_of(*extra, *options)
    if t is bytes:
        return st.one_of(*extra, st.binary(max_size=max(8, len(value) + 4)))
    if t is decimal.Decimal:
        exp = value.as_tuple().exponent
        places = -exp if isinstance(exp, int) and exp < 0 else 0
        return st.one_of(*extra, st.decimals(-10**6, 10**6, places=min(places, 6), allow_nan=False,
                                             allow_infinity=False))
    if t is fractions.Fraction:
        return st.one_of(*extra, st.fractions(-1000, 1000, max_denominator=100))
    if t is dt.date:
        return st.one_of(*extra, st.dates(dt.date(1999, 1, 1), dt.date(2040, 12, 31)),
                         st.integers(-40, 40).map(lambda d: value + dt.timedelta(days=d)))
    if t is dt.datetime:
        return st.one_of(*extra, st.datetimes(dt.datetime(1999, 1, 1), dt.datetime(2040, 12, 31)))
    if t is dt.timedelta:
        return st.one_of(*extra, st.integers(-400, 400).map(lambda d: dt.timedelta(days=d)))
    if depth < 3 and t in (list, tuple, set, frozenset):
        items = list(value)
        if not items:
            return st.just(value)
        elements = st.one_of(*[strategy_for(v, consts, depth + 1) for v in items[:4]])
        if t is tuple:
            return st.one_of(*extra, st.tuples(*[strategy_for(v, consts, depth + 1) for v in items]))
        size = max(6, len(items) + 2)
        if t is list:
            return st.one_of(*extra, st.lists(elements, max_size=size))
        if t is set:
            return st.one_of(*extra, st.sets(elements, max_size=size))
        return st.one_of(*extra, st.frozensets(elements, max_size=size))
    if depth < 3 and t is dict and value:
        keys = st.one_of(*[strategy_for(k, consts, depth + 1) for k in list(value)[:4]])
        vals = st.one_of(*[strategy_for(v, consts, depth + 1) for v in list(value.values())[:4]])
        return st.one_of(*extra, st.dictionaries(keys, vals, max_size=max(4, len(value) + 2)))
    return st.just(value)


def _scalar(consts):
    pool = sorted((k for k in consts if type(k) in (int, float, str)), key=repr)
    options = [
        st.integers(-100, 100),
        st.floats(-1000, 1000, allow_nan=False, allow_infinity=False, width=32),
        st.decimals(-1000, 1000, places=2, allow_nan=False, allow_infinity=False),
        st.text(alphabet="aZ09 .-:,", max_size=8),
        st.lists(st.integers(-10, 10), max_size=5),
    ]
    if pool:
        options.insert(0, st.sampled_from(pool))
    return st.one_of(*options)


def _defaulted(fn, given, kwargs, consts):
    """Strategies for the positional parameters after the `given` ones that have defaults
    (and were not passed by keyword)."""
    import inspect

    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []
    out = []
    for p in params[given:]:
        if p.default is p.empty or p.name in kwargs:
            break
        out.append(st.one_of(st.just(p.default), strategy_for(p.default, consts)))
    return out


# A parameter left out of the call (it takes its default): a recorded call that always passes
# an optional argument never shows what the function does without it (`ceil(x)` when every
# test calls `ceil(x, options=...)`).
_OMIT = object()


def _omittable(fn, args, kwargs):
    """(the index from which the recorded positional arguments all have defaults, the
    recorded keyword arguments that have defaults)."""
    import inspect

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return len(args), set()
    positional = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    first = len(args)
    while first > 0 and first - 1 < len(positional) and positional[first - 1].default is not positional[first - 1].empty:
        first -= 1
    keywords = {name for name in kwargs
                if name in sig.parameters and sig.parameters[name].default is not sig.parameters[name].empty}
    return first, keywords


def _call_args(a, k, kw_names):
    """The positional arguments up to the first left out, and the keyword arguments given."""
    cut = next((i for i, x in enumerate(a) if x is _OMIT), len(a))
    return tuple(a[:cut]), {n: v for n, v in zip(kw_names, k) if v is not _OMIT}


def _neighbour_values(req, namespace):
    """The argument values the tests passed to the mutated module's other functions
    (REQUEST's "neighbour_args", `(args)` sources), evaluated; those that cannot be are left
    out."""
    values = []
    for text in req.get("neighbour_args") or []:
        try:
            a, k = literal.eval_source("(lambda *a, **k: (a, k))" + text, namespace)
        except Exception:
            continue
        for v in list(a) + list(k.values()):
            if not callable(v) and not any(v is w for w in values):
                values.append(v)
    return values[:60]


def _copied(value):
    import copy

    try:
        return copy.deepcopy(value)
    except Exception:
        return value


def _exception_classes(fn):
    """The builtin exception classes `fn`'s code names (`issubclass(etype, SyntaxError)`), at
    most 6: a function that takes exceptions is tried on them and on instances of them."""
    import builtins

    if isinstance(fn, type):
        fn = getattr(fn, "__init__", None)
    code = getattr(fn, "__code__", None)
    stack = [code] if code else []
    found = set()
    while stack:
        c = stack.pop()
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        for name in c.co_names:
            v = getattr(builtins, name, None)
            if isinstance(v, type) and issubclass(v, BaseException):
                found.add(v)
    return sorted(found, key=lambda c: c.__name__)[:6]


def _exception_instances(classes, consts):
    """Instances of exception classes: messages from the function's string literals; a
    SyntaxError also gets a location and the text of a line (what tracebacks print)."""
    texts = [k for k in consts if type(k) is str and len(k) <= 20]
    message = st.one_of(st.sampled_from(texts), st.text("abc xy", max_size=6)) if texts else \
        st.text("abc xy", max_size=6)
    line = st.one_of(st.sampled_from(["x = (1,\n", "print 1\n", "\tif x\n", "a b"]), st.none())

    def syntax_error(cls):
        return st.builds(lambda m, f, n, o, t: cls(m, (f, n, o, t)), message,
                         st.sampled_from(["<string>", "m.py"]), st.integers(1, 3),
                         st.one_of(st.integers(0, 6), st.none()), line)

    return st.one_of(*[syntax_error(c) if issubclass(c, SyntaxError) else st.builds(c, message)
                       for c in classes])


_TYPE_PARAM = re.compile(r"(^|_)(e?type|typ|cls|klass|class)(_|$)|^e?type|^exc_?type")


def _wants_class(name):
    """Whether a parameter's name says it takes a class (`etype`, `exc_type`, `cls`)."""
    return bool(_TYPE_PARAM.search(name or ""))


def _untyped(consts, neighbours=(), fn=None, name=None):
    """Values for a parameter without a hint: the function's literals, scalars, the values
    the tests passed to its neighbours (copied, as a call may change them), and, first, the
    builtin exceptions its code names: the classes for a parameter whose name says it takes a
    class (`etype`), else instances."""
    untyped = _scalar(consts)
    if neighbours:
        pool = list(neighbours)
        untyped = st.one_of(
            st.sampled_from(pool).map(_copied),
            st.one_of(*[strategy_for(v, consts) for v in pool[:12]]),
            untyped,
        )
    classes = _exception_classes(fn) if fn is not None else []
    if classes:
        # Mapped, so that Hypothesis does not flatten the other values' alternatives beside
        # the exceptions (which would then come up once in a dozen draws).
        rest = untyped.map(lambda v: v)
        if _wants_class(name):
            untyped = st.one_of(st.sampled_from(classes), rest)
        else:
            untyped = st.one_of(_exception_instances(classes, consts), rest)
    return untyped


def keyword_names(fn, consts):
    """For a function with `**kwargs`: the names it may look up in them, its identifier-like
    string literals that are not its parameters (`kwargs.pop('metadata', None)`), at most 6."""
    import inspect

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return []
    if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return []
    names = sorted(k for k in consts if type(k) is str and k.isidentifier()
                   and not k.startswith("_") and k not in params)
    return names[:6]


def from_signature(fn, consts, neighbours=()):
    """Positional strategies for the required parameters of `fn` (`()` when it has none), or
    None. A parameter without a hint draws from the function's literals, scalars, and the
    values the tests passed to its neighbours (copied, as a call may change them)."""
    import inspect

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    untyped = _untyped(consts, neighbours, fn)
    classes = _exception_classes(fn)
    parts = []
    names = []  # the required parameters' names (None: a hinted one)
    hints = {int: st.integers(-100, 100), float: st.floats(-1000, 1000, allow_nan=False),
             str: st.text(max_size=10), bool: st.booleans(),
             decimal.Decimal: st.decimals(-1000, 1000, places=2, allow_nan=False, allow_infinity=False)}
    star = False
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            star = True
            continue
        if p.kind in (p.VAR_KEYWORD, p.KEYWORD_ONLY):
            continue
        if p.default is not p.empty:
            break
        names.append(p.name if p.annotation not in hints else None)
        if p.annotation in hints:
            parts.append(hints[p.annotation])
        elif classes:
            parts.append(_untyped(consts, neighbours, fn, p.name))
        else:
            parts.append(untyped)
    if star:
        # `*args` (a mixin's `__new__(cls, *args, **kw)`): none, one or two more values.
        return st.tuples(st.tuples(*parts), st.lists(untyped, max_size=2)).map(
            lambda t: t[0] + tuple(t[1]))
    if classes and names and None not in names and any(_wants_class(n) for n in names):
        # `format_exception_only(etype, value)`: a class and an instance of that class, drawn
        # together (independent draws rarely agree); the other values beside them.
        def agreeing(cls):
            return st.tuples(*[st.just(cls) if _wants_class(n)
                               else _exception_instances([cls], consts) for n in names])

        return st.one_of(st.sampled_from(classes).flatmap(agreeing),
                         st.tuples(*parts).map(lambda t: t))
    return st.tuples(*parts)


_PACKAGE = [None]  # the mutated module's top-level package: its objects' state is compared


def _state(v):
    """The public attributes of an object of the package's classes, as reprs: an object whose
    repr hides its state can still differ in them."""
    t = type(v)
    if not _PACKAGE[0] or not str(getattr(t, "__module__", "")).startswith(_PACKAGE[0]):
        return ()
    d = getattr(v, "__dict__", None)
    if not isinstance(d, dict):
        return ()
    try:
        return tuple(sorted((k, _ADDRESS.sub("", repr(x))) for k, x in d.items()
                            if isinstance(k, str) and not k.startswith("_") and not callable(x)))
    except Exception:
        return ()


def _outcome(fn, args, kwargs):
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        v = fn(*args, **kwargs)
        # Two objects of a class without a repr differ only in their addresses.
        return ("value", _ADDRESS.sub("", repr(v)), _state(v))
    except _Timeout:
        return ("timeout",)
    except RecursionError:
        return ("raised", "RecursionError")
    except Exception as e:
        # An exception of the package's classes also differs in its public attributes
        # (marshmallow's ValidationError carries `valid_data`).
        return ("raised", type(e).__name__, str(e), _state(e))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _scenario_outcomes(mod, sc, ctor, step_args):
    """Outcomes of constructing `sc["cls"]` of `mod` and making its steps with `step_args`;
    object addresses are blanked so two runs compare."""
    try:
        obj = getattr(mod, sc["cls"])(*ctor[0], **ctor[1])
    except Exception as e:
        return [("raised", type(e).__name__, str(e))]
    out = []
    for step, (a, k) in zip(sc["steps"], step_args):
        o = _outcome(literal.through_syntax(obj, step["method"]), a, k)
        out.append(tuple(_ADDRESS.sub("", x) if isinstance(x, str) else x for x in o))
    return out


def search_scenarios(req, buggy, clean, deadline):
    """Hypothesis varies the arguments of the steps that call the mutated method in each
    scenario (the others keep their recorded arguments) until the clean and the buggy class
    behave differently somewhere in the scenario."""
    method = req["method"]
    found, tried = [], 0
    for index, sc in enumerate(req["scenarios"]):
        if time.monotonic() > deadline or found:
            break
        try:
            ctor = literal.eval_source("(lambda *a, **k: (a, k))" + sc["ctor_args"], vars(buggy))
            recorded = [literal.call_args(st_["args"], vars(buggy))
                        for st_ in sc["steps"]]
            consts = _consts(getattr(getattr(clean, sc["cls"]), method))
        except Exception:
            continue
        varied = [i for i, st_ in enumerate(sc["steps"]) if st_["method"] == method]
        if not varied:
            continue
        parts = []
        for i, (a, k) in enumerate(recorded):
            if i in varied:
                names = sorted(k)
                parts.append(st.tuples(
                    st.tuples(*[strategy_for(v, consts) for v in a]),
                    st.tuples(*[strategy_for(k[n], consts) for n in names]).map(
                        lambda vs, names=names: dict(zip(names, vs))),
                ))
            else:
                parts.append(st.just((a, k)))

        def differs(steps):
            if time.monotonic() > deadline:
                raise _Timeout()
            return (_scenario_outcomes(clean, sc, ctor, steps)
                    != _scenario_outcomes(buggy, sc, ctor, steps))

        tried += 1
        try:
            example = find(
                st.tuples(*parts),
                differs,
                settings=settings(
                    max_examples=int(req.get("max_examples", 600)),
                    database=None,
                    derandomize=True,
                    deadline=None,
                    suppress_health_check=list(HealthCheck),
                    phases=[Phase.generate, Phase.shrink],
                ),
            )
        except (NoSuchExample, Unsatisfiable, _Timeout):
            continue
        except Exception:
            continue
        imports = set()
        try:
            texts = []
            for i, (a, k) in enumerate(example):
                if i not in varied or sc["steps"][i]["args"] == literal.ATTRIBUTE:
                    texts.append(sc["steps"][i]["args"])
                    continue
                items = [literal.to_source(v, imports, {req["module"]}) for v in a]
                items += ["%s=%s" % (n, literal.to_source(v, imports, {req["module"]}))
                          for n, v in sorted(k.items())]
                texts.append("(" + ", ".join(items) + ")")
        except literal.Refused:
            continue
        found.append({"index": index, "steps": texts, "imports": sorted(imports)})
    return {"scenarios": found, "tried": tried}


def main():
    req = json.load(open(sys.argv[1]))
    signal.signal(signal.SIGALRM, _alarm)
    buggy = importlib.import_module(req["module"])
    _PACKAGE[0] = req["module"].split(".")[0]
    spec = importlib.util.spec_from_loader(req["module"], loader=None)
    clean = importlib.util.module_from_spec(spec)
    clean.__file__ = getattr(buggy, "__file__", None)
    clean.__package__ = buggy.__package__
    exec(compile(req["clean_source"], req["file"], "exec"), clean.__dict__)
    deadline = time.monotonic() + float(req.get("seconds", 20))
    neighbours = _neighbour_values(req, vars(buggy))
    if req.get("scenarios") is not None:
        json.dump(search_scenarios(req, buggy, clean, deadline), open(sys.argv[2], "w"))
        return
    found, tried = [], 0
    for tpl in req["templates"]:
        if time.monotonic() > deadline or len(found) >= 3:
            break
        qualname = tpl["qualname"]

        def bound(mod):
            if tpl.get("receiver"):
                obj = literal.eval_source(tpl["receiver"], vars(mod))
                name = qualname.split(".", 1)[1]
                if tpl.get("args") is None:
                    import inspect

                    if isinstance(inspect.getattr_static(type(obj), name, None),
                                  (classmethod, staticmethod)):
                        # Called on its class instead (a template of its own).
                        raise TypeError("%s is called on its class" % qualname)
                return literal.through_syntax(obj, name)
            fn = mod
            for part in qualname.split("."):
                owner, fn = fn, getattr(fn, part)
            if isinstance(owner, type) and tpl.get("args") is None:
                # A method called on its class: only a class or static method can be.
                import inspect

                kind = inspect.getattr_static(owner, qualname.rsplit(".", 1)[1], None)
                if not isinstance(kind, (classmethod, staticmethod)):
                    raise TypeError("%s needs an object" % qualname)
            return fn

        try:
            fn_b, fn_c = bound(buggy), bound(clean)
            consts = _consts(getattr(fn_c, "__func__", fn_c))
            if tpl.get("args") is None:
                # Never called by the tests: strategies from the signature and literals; the
                # names a `**kwargs` function looks up may be passed or not.
                arg_strategy = from_signature(fn_c, consts, neighbours)
                if arg_strategy is None:
                    continue
                kw_names = keyword_names(fn_c, consts)
                kwargs = {}
            else:
                args, kwargs = literal.call_args(tpl["args"], vars(buggy))
                first_optional, optional_kw = _omittable(fn_c, args, kwargs)
                strategies = [
                    st.one_of(st.just(_OMIT), strategy_for(a, consts)) if i >= first_optional
                    else strategy_for(a, consts)
                    for i, a in enumerate(args)
                ]
                # Parameters the recorded call left at their defaults vary too.
                strategies += _defaulted(fn_c, len(args), kwargs, consts)
                arg_strategy = st.tuples(*strategies)
                kw_names = sorted(kwargs)
        except Exception:
            continue
        if tpl.get("args") is None:
            optional_kw = set(kw_names)
            untyped = _untyped(consts, neighbours, fn_c)
            kwargs = {k: None for k in kw_names}
        kw_strategy = st.tuples(*[
            st.one_of(st.just(_OMIT), untyped) if tpl.get("args") is None else
            st.one_of(st.just(_OMIT), strategy_for(kwargs[k], consts)) if k in optional_kw
            else strategy_for(kwargs[k], consts)
            for k in kw_names
        ]) if kw_names else st.just(())

        def differs(example):
            a, k = _call_args(example[0], example[1], kw_names)
            if time.monotonic() > deadline:
                raise _Timeout()
            return _outcome(fn_c, a, k) != _outcome(fn_b, a, k)

        budget = max(1.0, deadline - time.monotonic())
        try:
            example = find(
                st.tuples(arg_strategy, kw_strategy),
                differs,
                settings=settings(
                    max_examples=int(req.get("max_examples", 1500)),
                    database=None,
                    derandomize=True,
                    deadline=None,
                    suppress_health_check=list(HealthCheck),
                    phases=[Phase.generate, Phase.shrink],
                ),
            )
        except (NoSuchExample, Unsatisfiable):
            tried += 1
            continue
        except _Timeout:
            tried += 1
            break
        except Exception:
            tried += 1
            continue
        tried += 1
        a, k = _call_args(example[0], example[1], kw_names)
        imports = set()
        try:
            parts = [literal.to_source(v, imports, {req["module"]}) for v in a]
            parts += ["%s=%s" % (n, literal.to_source(v, imports, {req["module"]})) for n, v in sorted(k.items())]
        except literal.Refused:
            continue
        args_text = "(" + ", ".join(parts) + ")"
        if tpl.get("receiver") and args_text == "()":
            owner_name, _, attr = qualname.rpartition(".")
            if literal.is_attribute(getattr(clean, owner_name, None), attr):
                args_text = literal.ATTRIBUTE  # a property: read, not called
        found.append({
            "qualname": qualname,
            "receiver": tpl.get("receiver"),
            "args": args_text,
            "imports": sorted(imports),
        })
    json.dump({"found": found, "tried": tried}, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
