"""Remove the installed copies of a repository's own files from the venv (task images).

Usage: strip-installed.py ROOT...   (the repository's import roots inside the image, e.g.
/testbed/src /testbed). Tests import the repository from /testbed through PYTHONPATH; a copy
installed into site-packages at the clean commit would hand an agent the fix (diff -r). For
every installed distribution, each recorded file whose path relative to site-packages exists
under one of the roots at import time is deleted, with its bytecode; the distribution's
metadata (version, entry points) stays. Prints what it removed.
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
