# swe-forge reachability probe: whether a function's code can still be called once the package
# is imported. `python swe_forge_reach.py IN OUT`; IN: JSON {"modules": [module names to
# import, the mutated one first], "file": repository-relative path, "qualname": the function's
# dotted name in its module, "lines": [first, last]} (1-based, the function's lines). It imports every module it can, collects garbage, and counts
# the live function objects whose code was compiled from that file, has that name and spans
# those lines (decorated functions count: the wrapper keeps the original alive).
# OUT: JSON {"imported": N, "failed": [modules that did not import], "live": N, "nested": bool}
# (`nested`: the function is defined inside another function, whose calls make it: not judged).
# `live == 0` after importing the mutated module means no caller can ever run that code: a
# definition that an import replaces (boltons' urlutils keeps a copy of OrderedMultiDict and
# then imports dictutils' over it), or one only an older Python would define.
import gc
import importlib
import json
import os
import sys
import types

req = json.load(open(sys.argv[1]))
root = os.path.realpath(os.getcwd())
target = os.path.realpath(os.path.join(root, req["file"]))
first, last = req["lines"]
parts = req["qualname"].split(".")
name = parts[-1]
imported = 0
failed = []
for module in req["modules"]:
    try:
        importlib.import_module(module)
        imported += 1
    except BaseException as e:  # a module that needs what is not installed: skipped
        failed.append("%s (%s)" % (module, type(e).__name__))
gc.collect()


def spans(code, line):
    """Whether `code` (from its first decorator to its last line) holds `line`."""
    if code.co_firstlineno > line:
        return False
    try:
        lines = [l for _, _, l in code.co_lines() if l is not None]
    except AttributeError:  # before 3.10
        import dis

        lines = [l for _, l in dis.findlinestarts(code)]
    return bool(lines) and line <= max(lines)


live = 0
for obj in gc.get_objects():
    if type(obj) is not types.FunctionType:
        continue
    code = obj.__code__
    if code.co_name != name or not spans(code, first + 1 if last > first else first):
        continue
    try:
        if os.path.realpath(code.co_filename) == target:
            live += 1
    except (TypeError, ValueError):
        continue
# A function inside a function exists only while its outer one runs: not judged. The path to
# a method goes through classes (or through a name the module no longer defines).
nested = False
obj = sys.modules.get(req["modules"][0]) if req["modules"] else None
for part in parts[:-1]:
    if obj is None:
        break
    obj = getattr(obj, part, None)
    if obj is not None and not isinstance(obj, type):
        nested = True
        break
with open(sys.argv[2], "w") as f:
    json.dump({"imported": imported, "failed": failed, "live": live, "nested": nested}, f)
