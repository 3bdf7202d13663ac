/*
 * swe-forge: turns the per-test JaCoCo execution data written by PerTestListener into a JSON
 * map {"<class>#<method>": {"<repo-relative source path>": [line, ...]}}.
 *
 * Usage:
 *   java -cp OUT:/usr/share/java/org.jacoco.core.jar:/usr/share/java/asm.jar:\
 *     /usr/share/java/asm-commons.jar:/usr/share/java/asm-tree.jar \
 *     sweforge.PerTestCoverage ROOT EXEC_DIR OUT_JSON
 *
 * ROOT is the repository root: every <module>/target/classes below it is analysed, and class
 * files are mapped back to the .java files of the same module (outside target/). EXEC_DIR holds
 * index.tsv and the .exec files. A line counts as executed by a test when JaCoCo reports it
 * partly or fully covered by that test's data. Only classes a test touched are analysed, so a
 * run costs roughly (tests x classes touched per test).
 *
 * Build: javac -d OUT -cp /usr/share/java/org.jacoco.core.jar PerTestCoverage.java
 */
package sweforge;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jacoco.core.analysis.Analyzer;
import org.jacoco.core.analysis.CoverageBuilder;
import org.jacoco.core.analysis.IClassCoverage;
import org.jacoco.core.analysis.ICounter;
import org.jacoco.core.data.ExecutionData;
import org.jacoco.core.data.ExecutionDataStore;
import org.jacoco.core.tools.ExecFileLoader;

public final class PerTestCoverage {
    /** A compiled class: its bytes and the module directory (repo-relative, "" at the root). */
    private static final class ClassFile {
        final byte[] bytes;
        final String module;

        ClassFile(byte[] bytes, String module) {
            this.bytes = bytes;
            this.module = module;
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            System.err.println("usage: PerTestCoverage ROOT EXEC_DIR OUT_JSON");
            System.exit(2);
        }
        Path root = Paths.get(args[0]).toAbsolutePath().normalize();
        Path execs = Paths.get(args[1]);
        Path out = Paths.get(args[2]);

        Map<String, ClassFile> classes = loadClasses(root);
        List<String> sources = listSources(root);
        Map<String, String> pathCache = new HashMap<>();
        Map<String, Map<String, TreeSet<Integer>>> result = new TreeMap<>();

        Path index = execs.resolve("index.tsv");
        List<String> lines = Files.exists(index)
                ? Files.readAllLines(index, StandardCharsets.UTF_8) : new ArrayList<>();
        for (String line : lines) {
            int tab = line.indexOf('\t');
            if (tab < 0) {
                continue;
            }
            String test = line.substring(tab + 1);
            Map<String, TreeSet<Integer>> files = result.computeIfAbsent(test, k -> new TreeMap<>());
            ExecFileLoader loader = new ExecFileLoader();
            loader.load(execs.resolve(line.substring(0, tab)).toFile());
            ExecutionDataStore store = loader.getExecutionDataStore();
            CoverageBuilder builder = new CoverageBuilder();
            Analyzer analyzer = new Analyzer(store, builder);
            Map<String, String> moduleOf = new HashMap<>();
            for (ExecutionData data : store.getContents()) {
                ClassFile cf = classes.get(data.getName());
                if (cf == null || !data.hasHits()) {
                    continue;
                }
                analyzer.analyzeClass(cf.bytes, data.getName());
                moduleOf.put(data.getName(), cf.module);
            }
            for (IClassCoverage cc : builder.getClasses()) {
                if (cc.getSourceFileName() == null || cc.getFirstLine() < 0) {
                    continue;
                }
                String pkgPath = cc.getPackageName().isEmpty() ? cc.getSourceFileName()
                        : cc.getPackageName() + "/" + cc.getSourceFileName();
                String module = moduleOf.getOrDefault(cc.getName(), "");
                String path = pathCache.computeIfAbsent(module + "\u0000" + pkgPath,
                        k -> resolve(sources, module, pkgPath));
                for (int l = cc.getFirstLine(); l <= cc.getLastLine(); l++) {
                    int status = cc.getLine(l).getStatus();
                    if (status == ICounter.FULLY_COVERED || status == ICounter.PARTLY_COVERED) {
                        files.computeIfAbsent(path, k -> new TreeSet<>()).add(l);
                    }
                }
            }
        }
        try (Writer w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            writeJson(w, result);
        }
    }

    /** Class files under every .../target/classes, keyed by VM name (a/b/C). */
    private static Map<String, ClassFile> loadClasses(Path root) throws IOException {
        Map<String, ClassFile> classes = new HashMap<>();
        List<Path> dirs;
        try (Stream<Path> walk = Files.walk(root)) {
            dirs = walk.filter(p -> p.endsWith(Paths.get("target", "classes")) && Files.isDirectory(p))
                    .collect(Collectors.toList());
        }
        for (Path dir : dirs) {
            Path moduleDir = dir.getParent().getParent();
            String module = root.relativize(moduleDir).toString();
            List<Path> files;
            try (Stream<Path> walk = Files.walk(dir)) {
                files = walk.filter(p -> p.toString().endsWith(".class")).collect(Collectors.toList());
            }
            for (Path f : files) {
                String rel = dir.relativize(f).toString().replace('\\', '/');
                String name = rel.substring(0, rel.length() - ".class".length());
                if (!name.endsWith("module-info") && !name.endsWith("package-info")) {
                    classes.putIfAbsent(name, new ClassFile(Files.readAllBytes(f), module));
                }
            }
        }
        return classes;
    }

    /** Repo-relative paths of the .java files outside target/ directories. */
    private static List<String> listSources(Path root) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(p -> p.toString().endsWith(".java"))
                    .map(p -> root.relativize(p).toString().replace('\\', '/'))
                    .filter(p -> !p.startsWith("target/") && !p.contains("/target/"))
                    .sorted()
                    .collect(Collectors.toList());
        }
    }

    /** The source file of a class: same module, main sources before test sources, shortest. */
    private static String resolve(List<String> sources, String module, String pkgPath) {
        String best = null;
        int bestRank = Integer.MAX_VALUE;
        String prefix = module.isEmpty() ? "" : module + "/";
        for (String s : sources) {
            if (!(s.equals(pkgPath) || s.endsWith("/" + pkgPath))) {
                continue;
            }
            int rank = (s.startsWith(prefix) ? 0 : 2) + (s.contains("/test/") ? 1 : 0);
            if (rank < bestRank || (rank == bestRank && s.length() < best.length())) {
                best = s;
                bestRank = rank;
            }
        }
        return best != null ? best : pkgPath;
    }

    private static void writeJson(Writer w, Map<String, Map<String, TreeSet<Integer>>> result)
            throws IOException {
        w.write("{");
        boolean firstTest = true;
        for (Map.Entry<String, Map<String, TreeSet<Integer>>> t : result.entrySet()) {
            w.write(firstTest ? "\n" : ",\n");
            firstTest = false;
            writeString(w, t.getKey());
            w.write(": {");
            boolean firstFile = true;
            for (Map.Entry<String, TreeSet<Integer>> f : t.getValue().entrySet()) {
                w.write(firstFile ? "" : ", ");
                firstFile = false;
                writeString(w, f.getKey());
                w.write(": [");
                w.write(f.getValue().stream().map(String::valueOf).collect(Collectors.joining(",")));
                w.write("]");
            }
            w.write("}");
        }
        w.write("\n}\n");
    }

    private static void writeString(Writer w, String s) throws IOException {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        w.write(b.append('"').toString());
    }
}
