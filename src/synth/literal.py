# Shared by trace.py and replay.py (swe-forge test synthesis): write a value back as Python
# source that evaluates to an equal value, or refuse.
#
# Accepted: None, bools, ints, finite floats, str, bytes, Decimal, Fraction, the datetime
# types, tuples/lists/dicts/sets/frozensets of accepted values, and objects of the
# repository's own classes whose repr() evaluates (in their module) to an equal object or
# whose construction the tracer saw (CONSTRUCTED), and
# functions and classes by their importable name (`len`, `operator.add`, `pkg.mod.helper`).
# Sets are written sorted by their elements' source so the text is stable; they still compare
# by equality. Anything else (object ids, open files, generators, NaN) is refused.

import datetime as _dt
import decimal as _decimal
import fractions as _fractions
import math as _math
import os as _os
import sys as _sys
import types as _types

MAX_SOURCE = 240
MAX_ITEMS = 24

# Paths of the machine that generates (the worktree, as the helpers run in it, and the temporary
# directory, where pytest's tmp_path lives): a value holding one is refused, so no synthesized
# test or issue text carries `/tmp/swe-forge-wt-…/worker-1/repo/…`, and no test depends on a
# directory that exists only here.
# The temporary directories are read from the environment, not from tempfile.gettempdir(): that
# probes each candidate directory by writing a file into it, and CrossHair refuses to load a
# module that writes a file on import (every symbolic comparison failed so).
_MACHINE_PATHS = tuple(sorted({
    p for p in (_os.getcwd(), _os.path.realpath(_os.getcwd()), "/tmp/")
    + tuple(_os.path.realpath(_os.environ[v]) + "/"
            for v in ("TMPDIR", "TEMP", "TMP") if _os.environ.get(v))
    if len(p) > 1
}))


def _machine_path(text):
    return any(p in text for p in _MACHINE_PATHS)


class Refused(Exception):
    pass


# Objects of the repository's classes whose construction the tracer saw with arguments it
# could write back: id -> (module, class name, `(args)` source, imports). Such an object is
# written as that constructor call (`Tuple((String(), Integer()))`) when its repr is not one.
# Filled by trace.py, which keeps the objects alive so their ids stay theirs; empty elsewhere.
CONSTRUCTED = {}


def to_source(value, imports, repo_modules, depth=0):
    """Source text for `value`; adds the imports it needs to `imports` (a set of lines)."""
    if depth > 4:
        raise Refused("too deep")
    t = type(value)
    if value is None or t is bool:
        return repr(value)
    if t is int:
        if abs(value) > 10**30:
            raise Refused("huge int")
        return repr(value)
    if t is float:
        if not _math.isfinite(value):
            raise Refused("non-finite float")
        return repr(value)
    if t is str or t is bytes:
        if len(value) > MAX_SOURCE:
            raise Refused("long string")
        if _machine_path(value if t is str else value.decode("latin-1")):
            raise Refused("a path of this machine")
        return repr(value)
    if t is _decimal.Decimal:
        if not value.is_finite():
            raise Refused("non-finite decimal")
        imports.add("from decimal import Decimal")
        return "Decimal(%r)" % str(value)
    if t is _fractions.Fraction:
        imports.add("from fractions import Fraction")
        return "Fraction(%d, %d)" % (value.numerator, value.denominator)
    if t in (_dt.date, _dt.datetime, _dt.time, _dt.timedelta):
        if getattr(value, "tzinfo", None) is not None:
            raise Refused("aware datetime")
        imports.add("import datetime")
        return repr(value)
    if t in (tuple, list, set, frozenset, dict):
        if len(value) > MAX_ITEMS:
            raise Refused("large container")
        if t is dict:
            items = [
                "%s: %s"
                % (
                    to_source(k, imports, repo_modules, depth + 1),
                    to_source(v, imports, repo_modules, depth + 1),
                )
                for k, v in value.items()
            ]
            return "{" + ", ".join(items) + "}"
        items = [to_source(v, imports, repo_modules, depth + 1) for v in value]
        if t is tuple:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if t is list:
            return "[" + ", ".join(items) + "]"
        items.sort()
        if t is set:
            return "{" + ", ".join(items) + "}" if items else "set()"
        return "frozenset({" + ", ".join(items) + "})" if items else "frozenset()"
    if t in _NAMED_TYPES or isinstance(value, type):
        return _named(value, imports, repo_modules)
    if isinstance(value, BaseException) and t.__module__ == "builtins":
        return _builtin_exception(value, t, imports, repo_modules, depth)
    module = getattr(t, "__module__", "")
    if module in repo_modules and "." not in t.__qualname__:
        try:
            return _repo_object(value, t, module, imports)
        except Refused:
            made = CONSTRUCTED.get(id(value))
            if made is None or made[0] != module or made[1] != t.__name__:
                raise
            imports.update(made[3])
            imports.add("from %s import %s" % (module, t.__name__))
            return t.__name__ + made[2]
    raise Refused("unsupported type %s" % t.__name__)


def _builtin_exception(value, t, imports, repo_modules, depth):
    """`SyntaxError('msg', ('m.py', 1, 4, 'x = (1,'))`: a builtin exception made again from
    its arguments, when that gives the same arguments and attributes (no traceback, cause or
    notes is carried)."""
    if value.__traceback__ is not None or value.__cause__ is not None or \
            getattr(value, "__notes__", None):
        raise Refused("an exception that was raised")
    text = "%s(%s)" % (t.__name__, ", ".join(
        to_source(a, imports, repo_modules, depth + 1) for a in value.args))
    try:
        again = eval(text, {})
    except Exception:
        raise Refused("%s does not evaluate" % t.__name__)
    same = type(again) is t and again.args == value.args
    if same and isinstance(value, SyntaxError):
        same = all(getattr(again, a) == getattr(value, a)
                   for a in ("msg", "filename", "lineno", "offset", "text"))
    if not same:
        raise Refused("%s is not made again from its arguments" % t.__name__)
    return text


_NAMED_TYPES = (_types.FunctionType, _types.BuiltinFunctionType)
_STDLIB = getattr(_sys, "stdlib_module_names", frozenset())


def _named(value, imports, repo_modules):
    """A function or class by the name it has in its module (`len`, `operator.add`,
    `pkg.mod.helper`), when that name is importable: a builtin, the standard library or the
    repository's own modules; never a local function, a lambda or a test module's helper."""
    module = getattr(value, "__module__", None) or ""
    name = getattr(value, "__qualname__", "") or ""
    if not name.isidentifier():
        raise Refused("%r has no importable name" % name)
    if module == "builtins":
        import builtins

        if getattr(builtins, name, None) is value:
            return name
        raise Refused("%s is not the builtin of that name" % name)
    candidates = [module]
    if module.startswith("_"):  # `_operator.add` is `operator.add`
        candidates.insert(0, module[1:])
    for mod in candidates:
        top = mod.split(".")[0]
        if mod not in repo_modules and top not in _STDLIB:
            continue
        m = _sys.modules.get(mod)
        if m is not None and getattr(m, name, None) is value:
            imports.add("import %s" % mod)
            return "%s.%s" % (mod, name)
    raise Refused("%s.%s is not importable by name" % (module, name))


def _repo_object(value, t, module, imports):
    if type(value).__eq__ is object.__eq__:
        raise Refused("%s has no __eq__" % t.__name__)
    # A collection of the repository's (a list of 10,000 items) is refused before its repr is
    # built: the tracer tries `self` of every method call, and those reprs made it slow.
    if hasattr(t, "__len__"):
        try:
            size = len(value)
        except Exception:
            size = 0
        if isinstance(size, int) and size > MAX_ITEMS:
            raise Refused("large %s" % t.__name__)
    text = repr(value)
    if _machine_path(text):
        raise Refused("a path of this machine")
    if len(text) > MAX_SOURCE or not text.startswith(t.__name__ + "("):
        raise Refused("%s repr is not a constructor call" % t.__name__)
    namespace = dict(vars(_sys.modules[module]))
    namespace.update(_EVAL_GLOBALS)
    try:
        again = eval(text, namespace)
    except Exception:
        raise Refused("%s repr does not evaluate" % t.__name__)
    if type(again) is not t or not (again == value):
        raise Refused("%s repr does not round-trip" % t.__name__)
    # Its arguments need their own imports (dates, decimals) too.
    for name, line in _REPR_IMPORTS:
        if name in text:
            imports.add(line)
    imports.add("from %s import %s" % (module, t.__name__))
    return text


_EVAL_GLOBALS = {
    "Decimal": _decimal.Decimal,
    "Fraction": _fractions.Fraction,
    "datetime": _dt,
}
_REPR_IMPORTS = [
    ("Decimal(", "from decimal import Decimal"),
    ("Fraction(", "from fractions import Fraction"),
    ("datetime.", "import datetime"),
]


def eval_source(text, repo_namespace=None):
    # Top-level modules by name, for the dotted names `_named` writes (`operator.add`).
    namespace = {k: m for k, m in list(_sys.modules.items()) if "." not in k and m is not None}
    namespace.update(_EVAL_GLOBALS)
    if repo_namespace:
        namespace.update(repo_namespace)
    return eval(text, namespace)


# Special methods a test calls through a builtin (`repr(m)`, `len(m)`), which checks what
# the method returns (`__repr__` returning None raises TypeError there).
_THROUGH = {"__repr__": repr, "__str__": str, "__len__": len}


def through_syntax(obj, method):
    """`obj.method` as a callable, through its builtin when a test would call it that way; a
    property (`signer.secret_key`) as a call that reads it."""
    builtin = _THROUGH.get(method)
    if builtin is not None:
        return lambda: builtin(obj)
    if is_attribute(type(obj), method):
        return lambda: getattr(obj, method)
    return getattr(obj, method)


_attribute_cache = {}


def is_attribute(cls, name):
    """Whether `name` of `cls` is read as an attribute, not called: a property or a
    functools.cached_property (the tracer records its getter as a call with no arguments)."""
    key = (cls, name)
    known = _attribute_cache.get(key)
    if known is None:
        import functools
        import inspect

        try:
            kind = inspect.getattr_static(cls, name, None)
        except Exception:
            kind = None
        known = isinstance(kind, (property, functools.cached_property))
        try:
            _attribute_cache[key] = known
        except TypeError:
            pass
    return known


# The `args` of a recorded call that reads an attribute instead of calling (a property's
# getter): no parentheses, as the test writes it (`signer.secret_key`).
ATTRIBUTE = ""


def call_args(text, repo_namespace=None):
    """`(args, kwargs)` of a recorded `(args)` source; none for an attribute read."""
    if text == ATTRIBUTE:
        return (), {}
    return eval_source("(lambda *a, **k: (a, k))" + text, repo_namespace)
