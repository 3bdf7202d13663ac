"""Remove the installed copies of a repository's own files from the venv (task images).

Usage: strip-installed.py ROOT...   (the repository's import roots inside the image, e.g.
/testbed/src /testbed). Tests import the repository from /testbed through PYTHONPATH; a copy
installed into site-packages at the clean commit would hand an agent the fix (diff -r). For
every installed distribution, each recorded file whose path relative to site-packages exists
under one of the roots at import time is deleted, with its bytecode; the distribution's
metadata (version, entry points) stays. Copies of the repository's packages and root modules
that other distributions bundle (pip vendors six, idna, colorama) go too: an agent could diff
them against the start state as well. Prints what it removed.
"""
import importlib.metadata as md
import os
import sys

roots = [r for r in sys.argv[1:] if os.path.isdir(r)]
removed = 0
for dist in md.distributions():
    for f in dist.files or []:
        rel = str(f)
        if rel.startswith("..") or ".dist-info/" in rel or rel.endswith(".pth"):
            continue
        path = os.path.realpath(str(f.locate()))
        # Only the venv's files: a project's own metadata in the working directory (an
        # egg-info left by the build) lists the sources themselves.
        if not path.startswith(os.path.realpath(sys.prefix) + os.sep) or not os.path.isfile(path):
            continue
        source = rel[:-1] if rel.endswith(".pyc") and "__pycache__" not in rel else rel
        if any(os.path.exists(os.path.join(root, source)) for root in roots):
            os.remove(path)
            removed += 1
# Copies bundled inside other distributions (pip vendors six, idna, colorama…): a package of
# the repository (a folder with __init__.py at an import root) or a module at an import root,
# found by name anywhere in the venv, is removed when it sits under a vendoring folder
# (`_vendor`, `vendor`, `vendored`, `packages`, `extern`, `_vendored`) or holds a file
# byte-identical to the repository's.
import filecmp
import shutil

VENDOR = {"_vendor", "vendor", "vendored", "_vendored", "packages", "extern", "_extern"}
SKIP = {"tests", "test", "testing", "docs", "doc", "examples", "scripts", "benchmarks"}
ours = {}
for root in roots:
    for entry in os.listdir(root):
        p = os.path.join(root, entry)
        if os.path.isdir(p) and os.path.isfile(os.path.join(p, "__init__.py")) and entry not in SKIP:
            ours[entry] = p
        elif entry.endswith(".py") and os.path.isfile(p) and not entry.startswith(("test", "setup", "conftest", "noxfile")):
            ours[entry] = p


def same_file(a, b):
    try:
        return filecmp.cmp(a, b, shallow=False)
    except OSError:
        return False


def vendored(path):
    return any(part in VENDOR for part in path.split(os.sep))


for dirpath, dirnames, filenames in os.walk(sys.prefix):
    for d in list(dirnames):
        mine = ours.get(d)
        here = os.path.join(dirpath, d)
        if mine and os.path.isdir(mine) and os.path.isfile(os.path.join(here, "__init__.py")):
            shared = any(
                same_file(os.path.join(here, f), os.path.join(mine, f))
                for f in os.listdir(here)
                if f.endswith(".py") and os.path.isfile(os.path.join(mine, f))
            )
            if shared or vendored(dirpath):
                shutil.rmtree(here)
                dirnames.remove(d)
                removed += 1
    for f in filenames:
        mine = ours.get(f)
        here = os.path.join(dirpath, f)
        if mine and os.path.isfile(mine) and (vendored(dirpath) or same_file(here, mine)):
            os.remove(here)
            removed += 1
# Bytecode of modules whose source is gone.
for dirpath, dirnames, filenames in os.walk(sys.prefix):
    if os.path.basename(dirpath) != "__pycache__":
        continue
    parent = os.path.dirname(dirpath)
    for name in filenames:
        stem = name.split(".")[0]
        if not os.path.exists(os.path.join(parent, stem + ".py")):
            os.remove(os.path.join(dirpath, name))
            removed += 1
print(f"swe-forge: removed {removed} installed copies of the repository's files")
