"""The audit's safety checks, run in a task's start environment as the agent's user.

Reads a JSON spec from the file named by argv[1] (written by src/audit/safety.rs):
  root            the repository (/testbed)
  base_commit     the start state
  clean_blobs     blob ids (as the patches' index lines give them) that must not be reachable
  gold_windows    texts of the fixed code that the start state lacks
  hidden_windows  texts of the hidden tests
  changed         repository paths of the files the fix changes
  skip_roots      directories not searched (kernel file systems)
Prints one JSON object: {"problems": [{"reason": ..., "detail": ...}], "files": N}.
A reason is one of the audit's kebab-case names. Files the user cannot read are skipped: an
agent running as this user cannot read them either.
"""
import json
import os
import subprocess
import sys

spec = json.load(open(sys.argv[1]))
root = spec["root"]
problems = []


def problem(reason, detail):
    problems.append({"reason": reason, "detail": detail})


def git(*args):
    p = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    return p.returncode, p.stdout.strip(), p.stderr.strip()


def digest(path):
    try:
        with open(os.path.join(root, path), "rb") as f:
            return f.read()
    except OSError:
        return None


# 1. History: one parentless commit, no other ref, no reflog, stash or ORIG_HEAD.
rc, head, err = git("rev-parse", "HEAD")
if rc != 0 or head != spec["base_commit"]:
    problem("base-not-start-state", f"HEAD is `{head or err}`, not base_commit {spec['base_commit']}")
rc, body, _ = git("cat-file", "-p", "HEAD")
parents = [l for l in body.splitlines() if l.startswith("parent ")]
if parents:
    problem("base-has-parent", f"HEAD has {len(parents)} parent(s): {parents[0][7:]}")
rc, count, _ = git("rev-list", "--all", "--count")
if rc == 0 and count.strip() not in ("", "1"):
    problem("base-has-parent", f"{count} commits are reachable from the refs")
rc, refs, _ = git("for-each-ref", "--format=%(refname)")
extra = [r for r in refs.splitlines() if r and r != "refs/heads/main"]
if extra:
    problem("extra-git-state", "refs besides refs/heads/main: " + ", ".join(extra[:5]))
gitdir = os.path.join(root, ".git")
for name in ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "logs", "refs/stash", "packed-refs"):
    p = os.path.join(gitdir, name)
    if os.path.exists(p) and not (name == "packed-refs" and os.path.getsize(p) == 0):
        problem("extra-git-state", f".git/{name} exists")

# 2. No object of the clean files, or of the hidden tests, in the object database.
for blob in spec["clean_blobs"]:
    rc, _, _ = git("cat-file", "-e", blob)
    if rc == 0:
        problem("clean-object-reachable", f"`git cat-file -e {blob}` finds a clean blob")

# 3. `git checkout -- . && git stash && git reset --hard` changes nothing.
before = {p: digest(p) for p in spec["changed"]}
for cmd in (["checkout", "--", "."], ["stash"], ["reset", "--hard"]):
    git(*cmd)
rc, head_after, _ = git("rev-parse", "HEAD")
changed_by_git = [p for p in spec["changed"] if digest(p) != before[p]]
if head_after != head or changed_by_git:
    problem(
        "git-restore-changes-tree",
        "after git checkout/stash/reset: "
        + (f"HEAD moved to {head_after}; " if head_after != head else "")
        + ("changed " + ", ".join(changed_by_git) if changed_by_git else ""),
    )
# The hidden test files stay absent, by path too (a storage driver that loses a whiteout
# would show a lower layer's file again after the checkout above).
for path in spec.get("removed", []):
    if os.path.lexists(os.path.join(root, path)):
        problem("hidden-test-present", f"{path} exists after git checkout/stash/reset")
rc, stashes, _ = git("stash", "list")
if stashes:
    problem("extra-git-state", "git stash list is not empty")

# 4. The file system: no gold code, no hidden test, no clean build or bytecode.
gold = [w.encode() for w in spec["gold_windows"] if w.strip()]
hidden = [w.encode() for w in spec["hidden_windows"] if w.strip()]


def start_state_blobs():
    """The contents of HEAD's files: the start state the agent is given (provenance checks
    that it is exactly the clean commit with the bug applied and the hidden files removed)."""
    p = subprocess.run(["git", "ls-tree", "-r", "-z", "HEAD"], cwd=root, capture_output=True)
    ids = [e.split()[2] for e in p.stdout.split(b"\0") if e and e.split()[1] == b"blob"]
    if not ids:
        return []
    p = subprocess.run(["git", "cat-file", "--batch"], cwd=root, capture_output=True,
                       input=b"\n".join(ids) + b"\n")
    out, data, i = [], p.stdout, 0
    while i < len(data):
        nl = data.index(b"\n", i)
        size = int(data[i:nl].split()[2])
        out.append(data[nl + 1:nl + 1 + size])
        i = nl + 1 + size + 1
    return out


# A window the start state itself holds (the same code elsewhere in the repository: a twin
# branch of the mutated function, a test body repeated in another test file) is no evidence:
# finding it says nothing about the fix or the hidden tests.
tracked = start_state_blobs()
gold = [w for w in gold if not any(w in b for b in tracked)]
hidden = [w for w in hidden if not any(w in b for b in tracked)]
stems = {os.path.splitext(os.path.basename(p))[0] for p in spec["changed"]}
java_classes = {os.path.splitext(os.path.basename(p))[0] for p in spec["changed"] if p.endswith(".java")}
py_changed = [p for p in spec["changed"] if p.endswith(".py")]
skip = set(spec.get("skip_roots", []))
scanned = 0
found_gold = []
found_hidden = []
found_build = []
for dirpath, dirnames, filenames in os.walk("/", followlinks=False):
    dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in skip]
    for name in filenames:
        path = os.path.join(dirpath, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        if name.endswith(".class") and name.split("$")[0].removesuffix(".class") in java_classes:
            found_build.append(path)
        if name.endswith(".pyc") and name.split(".")[0] in stems and py_changed:
            try:
                import marshal
                with open(path, "rb") as f:
                    data = f.read()
                code = marshal.loads(data[16:])
                if any(code.co_filename.endswith("/" + p) for p in py_changed):
                    found_build.append(path)
            except Exception:
                pass
        try:
            if os.path.getsize(path) > 64 << 20:
                continue
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        scanned += 1
        for w in gold:
            if w in data:
                found_gold.append(path)
                break
        for w in hidden:
            if w in data:
                found_hidden.append(path)
                break
if found_gold:
    problem("gold-code-present", "the fixed code is in " + ", ".join(found_gold[:5]))
if found_hidden:
    problem("hidden-test-present", "a hidden test is in " + ", ".join(found_hidden[:5]))
if found_build:
    problem("clean-build-present", "compiled code of a changed file: " + ", ".join(found_build[:5]))
print(json.dumps({"problems": problems, "files": scanned}))
