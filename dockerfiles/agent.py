import json, os, resource, shutil, signal, subprocess, sys, time
IN, OUT = sys.stdin.buffer, sys.stdout.buffer
ROOT, SCRATCH = "/testbed", "/scratch"
ME, UID = os.getpid(), os.geteuid()
STDOUT, STDERR = SCRATCH + "/.swe-forge-stdout", SCRATCH + "/.swe-forge-stderr"
# The status walk at the end reads every directory again: on a fuse-overlayfs root a path that
# `git clean` just removed can still look present to the next process until its directory is
# read (a test patch that re-creates the file then fails with "already exists").
RESET = "git checkout -q -f HEAD -- . && git clean -q -f -d -x && git status --porcelain >/dev/null"


def reap():
    # kill(-1) reaches every process of this user but this one; repeat until none is left.
    for _ in range(1000):
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        left = False
        for p in os.listdir("/proc"):
            if p.isdigit() and int(p) != ME:
                try:
                    if os.stat("/proc/" + p).st_uid == UID:
                        left = True
                        break
                except OSError:
                    pass
        if not left:
            return
        time.sleep(0.001)


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
    def limits():
        # Memory is the container's cgroup limit, not an address-space limit: a JVM reserves
        # far more address space than it touches. A hog is ended by the OOM killer, and the
        # answer counts its kills.
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)

    argv = ["timeout", "-s", "KILL", "%.3f" % req["timeout"], "bash", "-c", req["script"], "bash"]
    before = oom_kills()
    started = time.monotonic()
    with open(STDOUT, "wb") as fo, open(STDERR, "wb") as fe:
        p = subprocess.Popen(argv + req.get("args", []), cwd=ROOT, stdout=fo, stderr=fe,
                             stdin=subprocess.PIPE if data else subprocess.DEVNULL,
                             preexec_fn=limits)
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
    elapsed = time.monotonic() - started
    reap()
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
        # `timeout` exits with the command's status, or dies by the signal that killed the
        # command (and by SIGKILL when it fired).
        "rc": rc if rc >= 0 else None,
        "signal": -rc if rc < 0 else None,
        "elapsed": elapsed,
        "oom_kills": max(0, oom_kills() - before),
        "stdout": [len(out), out_total],
        "stderr": [len(err), err_total],
        "files": files,
    }, payload


def main():
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
