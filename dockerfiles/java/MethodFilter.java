package sweforge;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashSet;
import java.util.Set;
import org.junit.platform.engine.FilterResult;
import org.junit.platform.engine.TestDescriptor;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.PostDiscoveryFilter;

/**
 * Selects test methods by name, as Surefire's {@code -Dtest=Class#method} does: every method of
 * that name (any parameter list, so parameterized and repeated tests too) in that class.
 *
 * <p>Registered as a JUnit Platform {@code PostDiscoveryFilter} through {@code
 * META-INF/services/org.junit.platform.launcher.PostDiscoveryFilter}; inactive unless the system
 * property {@code sweforge.select} names a file of lines {@code fully.qualified.Class#method} or
 * {@code fully.qualified.Class} (the whole class). swe-forge's fast Java path selects the classes
 * of the requested tests with {@code --select-class} and lets this filter keep the methods.
 */
public final class MethodFilter implements PostDiscoveryFilter {
    private final Set<String> methods = new HashSet<>();
    private final Set<String> classes = new HashSet<>();
    private final boolean active;

    public MethodFilter() {
        String file = System.getProperty("sweforge.select");
        boolean ok = false;
        if (file != null && !file.isEmpty()) {
            try {
                for (String line : Files.readAllLines(Paths.get(file), StandardCharsets.UTF_8)) {
                    String id = line.trim();
                    if (id.isEmpty()) {
                        continue;
                    }
                    int hash = id.indexOf('#');
                    if (hash < 0 || hash == id.length() - 1) {
                        classes.add(hash < 0 ? id : id.substring(0, hash));
                    } else {
                        methods.add(id);
                    }
                }
                ok = true;
            } catch (IOException e) {
                throw new IllegalStateException("sweforge.select: cannot read " + file, e);
            }
        }
        active = ok;
    }

    @Override
    public FilterResult apply(TestDescriptor descriptor) {
        if (!active) {
            return FilterResult.included("no selection");
        }
        TestSource source = descriptor.getSource().orElse(null);
        if (!(source instanceof MethodSource)) {
            // Containers stay; the launcher prunes those left without tests.
            return FilterResult.included("not a method");
        }
        MethodSource m = (MethodSource) source;
        String cls = m.getClassName();
        if (classes.contains(cls) || methods.contains(cls + "#" + m.getMethodName())) {
            return FilterResult.included("selected");
        }
        return FilterResult.excluded("not selected");
    }
}
