import json, os, resource, select, shutil, signal, subprocess, sys, threading, time
IN, OUT = sys.stdin.buffer, sys.stdout.buffer
ROOT, SCRATCH = "/testbed", "/scratch"
ME, UID = os.getpid(), os.geteuid()
STDOUT, STDERR = SCRATCH + "/.swe-forge-stdout", SCRATCH + "/.swe-forge-stderr"
SCRIPT = SCRATCH + "/.swe-forge-script.sh"
SCRIPT_ARG_BYTES = 100000
# The status walk at the end reads every directory again: on a fuse-overlayfs root a path that
# `git clean` just removed can still look present to the next process until its directory is
# read (a test patch that re-creates the file then fails with "already exists").
RESET = "git checkout -q -f HEAD -- . && git clean -q -f -f -d -x && git status --porcelain >/dev/null"


def others(spare=()):
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit() and int(p) != ME and int(p) not in spare:
            try:
                if os.stat("/proc/" + p).st_uid == UID:
                    out.append(int(p))
            except OSError:
                pass
    return out


def reap(spare=()):
    # kill(-1) reaches every process of this user but this one; repeat until none is left.
    # With processes to spare (the resident runner), everyone is stopped first (a stopped
    # process cannot fork), then all but those are killed, and those continue.
    sig = signal.SIGSTOP if spare else signal.SIGKILL
    for _ in range(1000):
        try:
            os.kill(-1, sig)
        except OSError:
            pass
        left = others(spare)
        for p in left if spare else ():
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        if not left:
            break
        time.sleep(0.001)
    for p in spare:
        try:
            os.kill(p, signal.SIGCONT)
        except OSError:
            pass


# The resident runner (src/runner/resident.py for pytest, Resident.java for the JVM): started
# on demand, kept across requests, replaced when asked for another program (command and first
# line) or when it said it exits.
RESIDENT = {"proc": None, "key": None, "greeting": None, "buf": b""}


def resident_stop():
    p = RESIDENT["proc"]
    if p is not None:
        try:
            p.kill()
            p.wait()
        except OSError:
            pass
    RESIDENT.update(proc=None, key=None, greeting=None, buf=b"")


def resident_line(deadline):
    p = RESIDENT["proc"]
    fd = p.stdout.fileno()
    while b"\n" not in RESIDENT["buf"]:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            return None
        RESIDENT["buf"] += chunk
    line, RESIDENT["buf"] = RESIDENT["buf"].split(b"\n", 1)
    return json.loads(line)


def resident_start(spec):
    key = (spec["argv"], spec["start"])
    if RESIDENT["proc"] is not None and RESIDENT["key"] == key \
            and RESIDENT["proc"].poll() is None:
        return RESIDENT["greeting"]
    resident_stop()
    try:
        p = subprocess.Popen(spec["argv"], cwd=ROOT, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError as e:
        return {"unsafe": "the resident runner did not start: %s" % e}
    RESIDENT.update(proc=p, key=key)
    try:
        p.stdin.write(json.dumps(spec["start"]).encode() + b"\n")
        p.stdin.flush()
    except OSError:
        pass
    hello = resident_line(time.monotonic() + 120)
    if hello is None:
        resident_stop()
        return {"unsafe": "the resident runner did not start"}
    RESIDENT["greeting"] = hello
    return hello


def oom_kills():
    for path in ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"):
        try:
            with open(path) as f:
                for line in f:
                    k, _, v = line.partition(" ")
                    if k == "oom_kill":
                        return int(v)
                return 0
        except OSError:
            pass
    return 0


def clear():
    for d in (SCRATCH, "/tmp", "/var/tmp", "/dev/shm"):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            p = os.path.join(d, n)
            try:
                if os.path.isdir(p) and not os.path.islink(p):
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    os.unlink(p)
            except OSError:
                pass


def head(path, cap):
    try:
        with open(path, "rb") as f:
            data = f.read(cap)
            total = os.fstat(f.fileno()).st_size
        return data, total
    except OSError:
        return b"", 0


def run(req, data):
    if req.get("reset") and subprocess.call(["bash", "-c", RESET], cwd=ROOT,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
        return {"reset_failed": True}, []
    if req.get("clear"):
        clear()
    before = oom_kills()
    started = time.monotonic()
    spec = req.get("resident")
    if spec:
        hello = resident_start(spec)
        if hello.get("unsafe"):
            return {"unsafe": hello["unsafe"]}, []
        run_req = dict(spec["run"], stdout=STDOUT, stderr=STDERR)
        pid = RESIDENT["proc"].pid
        answer = None
        try:
            RESIDENT["proc"].stdin.write(json.dumps(run_req).encode() + b"\n")
            RESIDENT["proc"].stdin.flush()
            answer = resident_line(started + req["timeout"] + 5)
        except OSError:
            pass
        lost = answer is None
        if lost:
            # Hung or killed (by a test): it goes; the next request starts another.
            resident_stop()
            reap()
            answer = {"rc": None, "signal": signal.SIGKILL,
                      "timed_out": time.monotonic() - started >= req["timeout"]}
        elif answer.get("exiting"):
            resident_stop()
            reap()
        else:
            reap(spare=(pid,))
        elapsed = answer.get("elapsed", time.monotonic() - started)
        if answer.get("timed_out"):
            rc = -signal.SIGKILL
        elif answer.get("rc") is not None:
            rc = answer["rc"]
        else:
            rc = -(answer.get("signal") or signal.SIGKILL)
        reply, payload = finish(req, rc, elapsed, before)
        reply["lost"] = lost
        return reply, payload
    # The command leads its own process group; at the deadline the whole group is killed
    # (by a timer, which also ends a write of stdin that the command never reads). No
    # `timeout` process, and no Python code run between fork and exec (which forces a full
    # fork): each costs a step its latency on a loaded machine. Memory is the container's
    # cgroup limit, not an address-space limit (a JVM reserves far more address space than it
    # touches): a hog is ended by the OOM killer, and the answer counts its kills. SIGPIPE is
    # the system's default again in the command (subprocess's restore_signals).
    argv = ["bash", "-c", req["script"], "bash"]
    fired = []
    with open(STDOUT, "wb") as fo, open(STDERR, "wb") as fe:
        p = subprocess.Popen(argv + req.get("args", []), cwd=ROOT, stdout=fo, stderr=fe,
                             stdin=subprocess.PIPE if data else subprocess.DEVNULL,
                             **NEW_GROUP)

        def expire():
            fired.append(True)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass

        timer = threading.Timer(req["timeout"], expire)
        timer.daemon = True
        timer.start()
        try:
            if data:
                try:
                    p.stdin.write(data)
                except OSError:
                    pass
                try:
                    p.stdin.close()
                except OSError:
                    pass
            rc = p.wait()
        finally:
            timer.cancel()
    elapsed = time.monotonic() - started
    reap(spare=(RESIDENT["proc"].pid,) if RESIDENT["proc"] is not None else ())
    if req.get("measure"):
        measure(req["measure"])
    reply, payload = finish(req, rc, elapsed, before)
    reply["timed_out"] = bool(fired) and rc == -signal.SIGKILL
    return reply, payload


def tree_kb(top):
    """The KiB `du -sk` gives for `top`: every file's blocks once (hard links once), not
    following links."""
    seen, total, stack = set(), os.lstat(top).st_blocks * 512, [top]
    while stack:
        try:
            it = os.scandir(stack.pop())
        except OSError:
            continue
        with it:
            for e in it:
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if st.st_nlink > 1:
                    if (st.st_dev, st.st_ino) in seen:
                        continue
                    seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
    return (total + 1023) // 1024


def own_tmpfs(path):
    """Whether `path` is a tmpfs mount of its own (by the mount table: on fuse-overlayfs a
    directory's device number can differ from its parent's without a mount)."""
    try:
        with open("/proc/self/mounts") as f:
            return any(len(m) > 2 and m[1] == path and m[2] == "tmpfs"
                       for m in (line.split() for line in f))
    except OSError:
        return False


def measure(path):
    """The repository's size into `path`, as `du -sk .` writes it. A repository in its own
    file system (a tmpfs) is measured by that file system's use, which nothing in it can
    hide (a directory made unreadable would hide its files from a walk)."""
    try:
        if own_tmpfs(ROOT):
            st = os.statvfs(ROOT)
            kb = (st.f_blocks - st.f_bfree) * st.f_frsize // 1024
        else:
            kb = tree_kb(ROOT)
        with open(path, "w") as f:
            f.write("%d\t.\n" % kb)
    except OSError:
        pass


def finish(req, rc, elapsed, before):
    cap = req.get("output_cap", 1 << 26)
    out, out_total = head(STDOUT, cap)
    err, err_total = head(STDERR, cap)
    for path in (STDOUT, STDERR):
        try:
            os.unlink(path)
        except OSError:
            pass
    payload = [out, err]
    files = []
    if req.get("prefetch"):
        file_cap = req.get("file_cap", 1 << 24)
        for name in sorted(os.listdir(SCRATCH)):
            path = os.path.join(SCRATCH, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            if st.st_size > file_cap:
                files.append([name, -1])
                continue
            blob, _ = head(path, file_cap)
            files.append([name, len(blob)])
            payload.append(blob)
    return {
        # The command's status, or the signal that killed it (SIGKILL at the deadline).
        "rc": rc if rc >= 0 else None,
        "signal": -rc if rc < 0 else None,
        "elapsed": elapsed,
        "oom_kills": max(0, oom_kills() - before),
        "stdout": [len(out), out_total],
        "stderr": [len(err), err_total],
        "files": files,
    }, payload


# A command in a process group of its own (`process_group` from Python 3.11).
NEW_GROUP = {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}


def main():
    # No core files from anything started here (inherited by every command).
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    reap()
    OUT.write(b'{"ready": true}\n')
    OUT.flush()
    while True:
        line = IN.readline()
        if not line:
            return
        req = json.loads(line)
        n = req.get("stdin", 0)
        data = b""
        while len(data) < n:
            chunk = IN.read(n - len(data))
            if not chunk:
                return
            data += chunk
        try:
            head_, payload = run(req, data)
        except Exception as e:  # report, keep serving
            head_, payload = {"error": "%s: %s" % (type(e).__name__, e)}, []
        OUT.write(json.dumps(head_).encode() + b"\n")
        for blob in payload:
            OUT.write(blob)
        OUT.flush()


main()
