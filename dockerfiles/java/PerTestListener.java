/*
 * swe-forge: per-test coverage for the JUnit Platform (JUnit 5, and JUnit 4 through the
 * vintage engine).
 *
 * Registered through META-INF/services/org.junit.platform.launcher.TestExecutionListener and
 * put on the test classpath with Surefire's -Dmaven.test.additionalClasspath. The test JVM
 * runs with the JaCoCo agent (output=none). After every test this listener takes the agent's
 * execution data and resets it (RT.getAgent().getExecutionData(true)), and writes it to
 * <dir>/<n>.exec, with a line "<n>.exec<TAB><class>#<method>" in <dir>/index.tsv. <dir> is the
 * system property sweforge.coverage.dir; without it the listener does nothing.
 *
 * Whatever runs between two tests (a class's @BeforeAll, static initialisers) is attributed
 * to the next test: the data is only reset when a test finishes.
 *
 * Build: javac -d OUT -cp /usr/share/java/junit-platform-launcher.jar:\
 *   /usr/share/java/junit-platform-engine.jar:/usr/share/java/junit-platform-commons.jar \
 *   PerTestListener.java
 */
package sweforge;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

public final class PerTestListener implements TestExecutionListener {
    private final Path dir;
    private final Object agent;
    private final Method getExecutionData;
    private int count;

    public PerTestListener() {
        String where = System.getProperty("sweforge.coverage.dir");
        Path d = null;
        Object a = null;
        Method m = null;
        if (where != null && !where.isEmpty()) {
            try {
                Class<?> rt = Class.forName("org.jacoco.agent.rt.RT");
                a = rt.getMethod("getAgent").invoke(null);
                m = Class.forName("org.jacoco.agent.rt.IAgent")
                        .getMethod("getExecutionData", boolean.class);
                d = Paths.get(where);
                Files.createDirectories(d);
            } catch (ReflectiveOperationException | IOException | RuntimeException e) {
                warn("swe-forge coverage listener disabled: " + e);
                d = null;
            }
        }
        dir = d;
        agent = a;
        getExecutionData = m;
    }

    @Override
    public void executionFinished(TestIdentifier test, TestExecutionResult result) {
        if (dir == null || !test.isTest()) {
            return;
        }
        String id = testId(test);
        try {
            byte[] data = (byte[]) getExecutionData.invoke(agent, true);
            String name = String.format("%06d.exec", count++);
            Files.write(dir.resolve(name), data);
            Files.write(dir.resolve("index.tsv"),
                    (name + "\t" + id + "\n").getBytes(StandardCharsets.UTF_8),
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (ReflectiveOperationException | IOException | RuntimeException e) {
            warn("swe-forge coverage: no data for " + id + ": " + e);
        }
    }

    /** class#method from the method source; the unique id where there is none. */
    static String testId(TestIdentifier test) {
        Optional<TestSource> source = test.getSource();
        if (source.isPresent() && source.get() instanceof MethodSource) {
            MethodSource m = (MethodSource) source.get();
            return m.getClassName() + "#" + m.getMethodName();
        }
        return test.getUniqueId();
    }

    private static void warn(String message) {
        PrintStream err = System.err;
        err.println(message);
    }
}
