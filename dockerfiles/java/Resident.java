package sweforge;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TimeZone;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.platform.console.ConsoleLauncher;

/**
 * swe-forge's resident JVM for the fast Java path: one long-lived JVM per worker and build that
 * compiles the changed sources with the in-process compiler and runs JUnit's console launcher
 * in-process, each run with a fresh class loader for the project's classes.
 *
 * <p>Started with the build's dependency jars, this class, the method filter and the console
 * launcher on the class path, at the repository root, with the protocol on file descriptors 3
 * (requests) and 4 (answers). The first line is a start object (ignored); the answer is {@code
 * {"ready":true,"pid":N}}. Each further line is a run request {@code {"args":[...],
 * "timeout":S,"cpu":S|null,"stdout":F,"stderr":F,"times":F}}; the answer is {@code
 * {"rc":N,"signal":null,"timed_out":false,"elapsed":S,"exiting":B}}. The arguments:
 *
 * <ul>
 *   <li>{@code --build=B}: the build entry ({@code main.cp}, {@code test.cp}, {@code main.opts},
 *       {@code test.opts}, {@code src/target/test-classes});
 *   <li>{@code --out=O}: the run's directory (its {@code reports/});
 *   <li>{@code --main=F}, {@code --test=F}: changed sources, compiled into overlays kept in the
 *       build entry by content ({@code overlay-main-K}, {@code overlay-test-K}, the same keys as
 *       the shell path's);
 *   <li>{@code --suite}, or {@code --id=Class#method} (repeated) with {@code --select=FILE};
 *   <li>{@code --bundle=F}, {@code --marker=M}, {@code --failed=F}, {@code --javac-log=F}: where
 *       the reports, a failed compilation's phase and javac's output go.
 * </ul>
 *
 * <p>Limits: the wall-clock timeout and the CPU limit (this process's CPU time during the run,
 * counted from when the changed sources are compiled: compiling is the build's work, as in the
 * fresh path, where the limit is set after javac) are enforced by a watchdog that answers and halts the JVM ({@code timed_out}, or signal 24 as
 * {@code ulimit -t} would). Isolation: a run's classes live in the console launcher's class
 * loader for that run; system properties, the default locale and time zone, and the standard
 * streams are restored after it; processes it started are killed. When a run leaves a thread
 * running, or a heap that stays full after a collection, the answer says {@code exiting} and the
 * JVM exits after it, so the next run starts a fresh one. An internal failure exits without an
 * answer (the caller then runs the request as a fresh process).
 */
public final class Resident {
    private static final Object LOCK = new Object();
    private static PrintStream answers;
    private static boolean answered;
    /** The number of the run in progress (a watchdog stops when it is not its own). */
    private static long current;
    /** This process's CPU time when the running request's tests started (the limit's start). */
    private static volatile long limitFrom;

    private Resident() {}

    public static void main(String[] argv) throws Exception {
        InputStream requests = new FileInputStream("/proc/self/fd/3");
        answers = new PrintStream(new FileOutputStream("/proc/self/fd/4"), true, "UTF-8");
        System.setIn(new java.io.ByteArrayInputStream(new byte[0]));
        BufferedReader in =
                new BufferedReader(new InputStreamReader(requests, StandardCharsets.UTF_8));
        if (in.readLine() == null) {
            return;
        }
        ToolProvider.getSystemJavaCompiler();
        answers.println("{\"ready\":true,\"pid\":" + ProcessHandle.current().pid() + ",\"warm\":0}");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().isEmpty()) {
                continue;
            }
            boolean exiting;
            try {
                exiting = serve(Json.object(line));
            } catch (Throwable t) {
                t.printStackTrace();
                System.exit(70);
                return;
            }
            if (exiting) {
                System.exit(0);
            }
        }
    }

    /** Run one request and answer it; whether the JVM must exit now. */
    private static boolean serve(Map<String, Object> req) throws Exception {
        @SuppressWarnings("unchecked")
        List<Object> args = (List<Object>) req.get("args");
        Plan plan = Plan.parse(args);
        double timeout = ((Number) req.get("timeout")).doubleValue();
        Object cpuLimit = req.get("cpu");
        String times = (String) req.get("times");
        long wall0 = System.nanoTime();
        long cpu0 = cpuNanos();
        limitFrom = cpu0;
        Set<Thread> threadsBefore = new HashSet<>(Thread.getAllStackTraces().keySet());
        Properties props = (Properties) System.getProperties().clone();
        Locale locale = Locale.getDefault();
        TimeZone zone = TimeZone.getDefault();
        PrintStream out0 = System.out;
        PrintStream err0 = System.err;
        long mine;
        synchronized (LOCK) {
            answered = false;
            mine = ++current;
        }
        double cpuSeconds = cpuLimit == null ? -1 : ((Number) cpuLimit).doubleValue();
        Thread watchdog =
                new Thread(() -> watch(mine, wall0, timeout, cpu0, cpuSeconds, times), "swe-forge-watchdog");
        watchdog.setDaemon(true);
        int rc;
        try (PrintStream out = new PrintStream(new FileOutputStream((String) req.get("stdout")), true, "UTF-8");
                PrintStream err = new PrintStream(new FileOutputStream((String) req.get("stderr")), true, "UTF-8")) {
            System.setOut(out);
            System.setErr(err);
            watchdog.start();
            try {
                rc = plan.run(out, err);
            } finally {
                System.setOut(out0);
                System.setErr(err0);
                System.setProperties(props);
                Locale.setDefault(locale);
                TimeZone.setDefault(zone);
            }
        }
        ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
        boolean exiting = leftThreads(threadsBefore) || heapStaysFull();
        synchronized (LOCK) {
            // (When the watchdog answered, it halts the JVM holding the lock: this waits forever.)
            answered = true;
            writeTimes(times, cpuNanos() - cpu0);
            answers.println(
                    "{\"rc\":" + rc + ",\"signal\":null,\"timed_out\":false,\"elapsed\":"
                            + seconds(System.nanoTime() - wall0) + ",\"exiting\":" + exiting + "}");
        }
        return exiting;
    }

    /** The watchdog of one run: answers and halts when a limit is passed. */
    private static void watch(long mine, long wall0, double timeout, long cpu0, double cpuLimit, String times) {
        while (true) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                return;
            }
            synchronized (LOCK) {
                if (answered || current != mine) {
                    return;
                }
                long now = cpuNanos();
                long cpu = now - cpu0;
                boolean wall = System.nanoTime() - wall0 > (long) (timeout * 1e9);
                boolean overCpu = cpuLimit >= 0 && now - limitFrom > (long) (cpuLimit * 1e9);
                if (!wall && !overCpu) {
                    continue;
                }
                answered = true;
                writeTimes(times, cpu);
                String end = overCpu && !wall
                        ? "\"rc\":null,\"signal\":24,\"timed_out\":false"
                        : "\"rc\":null,\"signal\":9,\"timed_out\":true";
                answers.println("{" + end + ",\"elapsed\":" + seconds(System.nanoTime() - wall0) + ",\"exiting\":true}");
                answers.flush();
                ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
                Runtime.getRuntime().halt(137);
            }
        }
    }

    /**
     * Whether a thread the run started is still alive after a short grace: a non-daemon one, or
     * a daemon one that is running (idle pool threads waiting for work do not count).
     */
    private static boolean leftThreads(Set<Thread> before) throws InterruptedException {
        for (int i = 0; i < 10; i++) {
            boolean any = false;
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                boolean busy = !t.isDaemon() || t.getState() == Thread.State.RUNNABLE;
                if (!before.contains(t) && t.isAlive() && busy && !t.getName().equals("swe-forge-watchdog")) {
                    any = true;
                    break;
                }
            }
            if (!any) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    /** Whether the heap is still more than half full after a collection. */
    private static boolean heapStaysFull() {
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        if (heap.getMax() <= 0 || heap.getUsed() < heap.getMax() / 2) {
            return false;
        }
        System.gc();
        heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        return heap.getUsed() >= heap.getMax() / 2;
    }

    private static long cpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return 0;
    }

    /** bash's `times` format: the second line holds the run's CPU time. */
    private static void writeTimes(String path, long cpuNanos) {
        if (path == null) {
            return;
        }
        double s = cpuNanos / 1e9;
        long m = (long) (s / 60);
        String line = String.format(Locale.ROOT, "%dm%.3fs 0m0.000s", m, s - m * 60);
        try {
            Files.write(Paths.get(path), ("0m0.000s 0m0.000s\n" + line + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // No CPU figure for this run.
        }
    }

    private static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.6f", nanos / 1e9);
    }

    /** One run: what to compile and which tests to launch. */
    static final class Plan {
        String build;
        String out;
        String bundle;
        String marker = "";
        String failed;
        String javacLog;
        String select;
        boolean suite;
        final List<String> main = new ArrayList<>();
        final List<String> test = new ArrayList<>();
        final List<String> ids = new ArrayList<>();

        static Plan parse(List<Object> args) {
            Plan p = new Plan();
            for (Object o : args) {
                String a = (String) o;
                int eq = a.indexOf('=');
                String key = eq < 0 ? a : a.substring(0, eq);
                String value = eq < 0 ? "" : a.substring(eq + 1);
                switch (key) {
                    case "--build": p.build = value; break;
                    case "--out": p.out = value; break;
                    case "--bundle": p.bundle = value; break;
                    case "--marker": p.marker = value; break;
                    case "--failed": p.failed = value; break;
                    case "--javac-log": p.javacLog = value; break;
                    case "--select": p.select = value; break;
                    case "--suite": p.suite = true; break;
                    case "--main": p.main.add(value); break;
                    case "--test": p.test.add(value); break;
                    case "--id": p.ids.add(value); break;
                    default: throw new IllegalArgumentException("unknown argument " + a);
                }
            }
            if (p.build == null || p.out == null || p.bundle == null || p.failed == null || p.javacLog == null) {
                throw new IllegalArgumentException("incomplete request " + args);
            }
            if (!p.suite && p.select == null) {
                throw new IllegalArgumentException("neither --suite nor --select");
            }
            return p;
        }

        int run(PrintStream out, PrintStream err) throws Exception {
            Path o = Paths.get(this.out);
            deleteTree(o);
            Path reports = o.resolve("reports");
            Files.createDirectories(reports);
            Files.deleteIfExists(Paths.get(failed));
            Path b = Paths.get(build);
            List<String> testCp = classPath(b.resolve("test.cp"));
            List<String> mainCp = classPath(b.resolve("main.cp"));
            String keyMain = "";
            Path mainOverlay = null;
            Path testOverlay = null;
            if (!main.isEmpty()) {
                keyMain = key("", main);
                mainOverlay = b.resolve("overlay-main-" + keyMain);
                if (!overlay(mainOverlay, main, b.resolve("main.opts"), String.join(File.pathSeparator, mainCp), o, "main sources", err)) {
                    return 1;
                }
            }
            if (!test.isEmpty()) {
                String keyTest = key(keyMain, test);
                testOverlay = b.resolve("overlay-test-" + keyTest);
                List<String> cp = new ArrayList<>();
                cp.add(mainOverlay == null ? o.resolve("main").toString() : mainOverlay.toString());
                cp.addAll(testCp);
                if (!overlay(testOverlay, test, b.resolve("test.opts"), String.join(File.pathSeparator, cp), o, "test sources", err)) {
                    return 1;
                }
            }
            limitFrom = cpuNanos();
            // The run's class loader: the overlays, then the project's own class directories
            // (the dependency jars are on this JVM's class path).
            List<String> loader = new ArrayList<>();
            if (testOverlay != null) {
                loader.add(testOverlay.toString());
            }
            if (mainOverlay != null) {
                loader.add(mainOverlay.toString());
            }
            for (String e : testCp) {
                if (new File(e).isDirectory()) {
                    loader.add(e);
                }
            }
            Path testClasses = b.resolve("src/target/test-classes");
            List<String> launch = new ArrayList<>(Arrays.asList(
                    "--disable-banner", "--details=none", "--disable-ansi-colors",
                    "--config=junit.platform.discovery.listener.default=logging",
                    "--reports-dir=" + reports,
                    "--class-path=" + String.join(File.pathSeparator, loader)));
            if (suite) {
                System.clearProperty("sweforge.select");
                launch.add("--scan-classpath=" + testClasses);
                // Surefire's includes and excludes, as the build's setup read them from the
                // POMs (surefire-config.awk), else Surefire's defaults.
                launch.add("--include-classname=" + firstLine(b.resolve("includes.re"),
                        "^(.*[.])?(Test[^.]*|[^.]*Test|[^.]*Tests|[^.]*TestCase)$"));
                launch.add("--exclude-classname=" + firstLine(b.resolve("excludes.re"), ".*[$].*"));
                if (testOverlay != null && hasFiles(testOverlay)) {
                    launch.add("--scan-classpath=" + testOverlay);
                }
            } else {
                StringBuilder sel = new StringBuilder();
                List<String> classes = new ArrayList<>();
                for (String id : ids) {
                    sel.append(id).append('\n');
                    int hash = id.indexOf('#');
                    String c = hash < 0 ? id : id.substring(0, hash);
                    if (!c.isEmpty() && !classes.contains(c)) {
                        classes.add(c);
                    }
                }
                Files.write(Paths.get(select), sel.toString().getBytes(StandardCharsets.UTF_8));
                int n = 0;
                for (String c : classes) {
                    String f = c.replace('.', '/') + ".class";
                    if ((testOverlay != null && Files.isRegularFile(testOverlay.resolve(f)))
                            || Files.isRegularFile(testClasses.resolve(f))) {
                        launch.add("--select-class=" + c);
                        n++;
                    }
                }
                if (n == 0) {
                    // Nothing selected: like a Surefire selection that matches nothing.
                    writeBundle(reports);
                    return 0;
                }
                System.setProperty("sweforge.select", select);
            }
            PrintWriter pout = new PrintWriter(out, true);
            PrintWriter perr = new PrintWriter(err, true);
            int rc = ConsoleLauncher.execute(pout, perr, launch.toArray(new String[0])).getExitCode();
            pout.flush();
            perr.flush();
            writeBundle(reports);
            return rc;
        }

        /** Compile `files` into the overlay `dir` unless it is already there. */
        private boolean overlay(Path dir, List<String> files, Path opts, String cp, Path o, String phase, PrintStream err)
                throws IOException {
            if (Files.isRegularFile(dir.resolve(".ok"))) {
                return true;
            }
            Path tmp = Paths.get(dir + ".tmp.r" + ProcessHandle.current().pid());
            deleteTree(tmp);
            Files.createDirectories(tmp);
            List<String> args = new ArrayList<>();
            for (String t : new String(Files.readAllBytes(opts), StandardCharsets.UTF_8).trim().split("\\s+")) {
                if (!t.isEmpty()) {
                    args.add(t);
                }
            }
            args.addAll(Arrays.asList("-d", tmp.toString(), "-cp", cp));
            args.addAll(files);
            JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            int rc = javac.run(null, log, log, args.toArray(new String[0]));
            Files.write(Paths.get(javacLog), log.toByteArray());
            if (rc != 0) {
                deleteTree(tmp);
                Files.write(Paths.get(failed), (phase + "\n").getBytes(StandardCharsets.UTF_8));
                err.write(log.toByteArray());
                err.flush();
                return false;
            }
            Files.write(tmp.resolve(".ok"), new byte[0]);
            try {
                Files.move(tmp, dir, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                // Another worker stored the same overlay first.
                deleteTree(tmp);
            }
            return Files.isRegularFile(dir.resolve(".ok"));
        }

        /** The reports, each after a marker line, as the shell path bundles them. */
        private void writeBundle(Path reports) throws IOException {
            List<Path> files = new ArrayList<>();
            try (Stream<Path> s = Files.list(reports)) {
                s.filter(p -> {
                    String n = p.getFileName().toString();
                    return n.startsWith("TEST-") && n.endsWith(".xml") && Files.isRegularFile(p);
                }).forEach(files::add);
            }
            files.sort(Comparator.comparing(Path::toString));
            try (OutputStream w = new FileOutputStream(bundle)) {
                for (Path f : files) {
                    w.write(("\n" + marker + f + " -->\n").getBytes(StandardCharsets.UTF_8));
                    w.write(Files.readAllBytes(f));
                }
            }
        }
    }

    /** The overlay key of the shell path: sha1 of the previous key and each file's path and bytes. */
    static String key(String previous, List<String> files) throws Exception {
        MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
        sha1.update((previous + "\n").getBytes(StandardCharsets.UTF_8));
        for (String f : files) {
            sha1.update((f + "\n").getBytes(StandardCharsets.UTF_8));
            sha1.update(Files.readAllBytes(Paths.get(f)));
        }
        StringBuilder hex = new StringBuilder();
        for (byte x : sha1.digest()) {
            hex.append(String.format("%02x", x));
        }
        return hex.substring(0, 20);
    }

    private static List<String> classPath(Path file) throws IOException {
        List<String> out = new ArrayList<>();
        for (String e : new String(Files.readAllBytes(file), StandardCharsets.UTF_8).trim().split(File.pathSeparator)) {
            if (!e.isEmpty()) {
                out.add(e);
            }
        }
        return out;
    }

    private static boolean hasFiles(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.anyMatch(p -> !p.getFileName().toString().equals(".ok"));
        }
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path q : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(q);
            }
        }
    }

    /** A JSON reader for the requests: objects, arrays, strings, numbers, booleans, null. */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        @SuppressWarnings("unchecked")
        static Map<String, Object> object(String text) {
            Json j = new Json(text);
            Object v = j.value();
            j.space();
            if (!(v instanceof Map) || j.i != j.s.length()) {
                throw new IllegalArgumentException("not one JSON object: " + text);
            }
            return (Map<String, Object>) v;
        }

        private void space() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private Object value() {
            space();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++;
                space();
                if (s.charAt(i) == '}') {
                    i++;
                    return m;
                }
                while (true) {
                    space();
                    String k = string();
                    space();
                    expect(':');
                    m.put(k, value());
                    space();
                    if (s.charAt(i) == ',') {
                        i++;
                        continue;
                    }
                    expect('}');
                    return m;
                }
            }
            if (c == '[') {
                List<Object> l = new ArrayList<>();
                i++;
                space();
                if (s.charAt(i) == ']') {
                    i++;
                    return l;
                }
                while (true) {
                    l.add(value());
                    space();
                    if (s.charAt(i) == ',') {
                        i++;
                        continue;
                    }
                    expect(']');
                    return l;
                }
            }
            if (c == '"') {
                return string();
            }
            if (s.startsWith("true", i)) {
                i += 4;
                return Boolean.TRUE;
            }
            if (s.startsWith("false", i)) {
                i += 5;
                return Boolean.FALSE;
            }
            if (s.startsWith("null", i)) {
                i += 4;
                return null;
            }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
            if (start == i) {
                throw new IllegalArgumentException("bad JSON at " + i);
            }
            return Double.parseDouble(s.substring(start, i));
        }

        private void expect(char c) {
            if (s.charAt(i) != c) {
                throw new IllegalArgumentException("expected " + c + " at " + i);
            }
            i++;
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') {
                    return b.toString();
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                    default: b.append(e);
                }
            }
        }
    }

    /** The first line of `file`, or `fallback` when it cannot be read or is empty. */
    static String firstLine(Path file, String fallback) {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            if (!lines.isEmpty() && !lines.get(0).trim().isEmpty()) {
                return lines.get(0).trim();
            }
        } catch (IOException | RuntimeException e) {
            // absent: Surefire's defaults
        }
        return fallback;
    }
}
