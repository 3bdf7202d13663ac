// swe-forge's Maven core extension for offline builds against the overlay of Debian's Maven
// repository (maven-overlay.py): before Maven plans the build, it removes from every project
// the plugins Debian does not package (stand-ins at version 0-dropped) and those the overlay's
// drop list names (`.swe-forge/dropped-plugins` in the local repository), and leaves out of a
// multi-module build the modules whose artifactIds `.swe-forge/dropped-modules` names (modules
// that do not build against Debian's libraries). A test run needs none of them. Loaded from Maven's lib/ext (repository images) or -Dmaven.ext.class.path
// (the local sandbox); declared in META-INF/plexus/components.xml (see java-maven.md).
package sweforge;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.maven.AbstractMavenLifecycleParticipant;
import org.apache.maven.execution.MavenSession;
import org.apache.maven.model.Build;
import org.apache.maven.model.PluginManagement;
import org.apache.maven.project.MavenProject;

public class SweForgeDropPlugins extends AbstractMavenLifecycleParticipant {
    static final String DROPPED = "0-dropped";

    @Override
    public void afterProjectsRead(MavenSession session) {
        java.io.File repo = session.getRequest().getLocalRepositoryPath();
        Set<String> drop = lines(repo, "dropped-plugins");
        Set<String> modules = lines(repo, "dropped-modules");
        if (!modules.isEmpty()) {
            List<MavenProject> kept = new ArrayList<>();
            for (MavenProject project : session.getProjects()) {
                if (!modules.contains(project.getArtifactId())) kept.add(project);
            }
            if (!kept.isEmpty() && kept.size() < session.getProjects().size()) {
                session.setProjects(kept);
            }
        }
        for (MavenProject project : session.getProjects()) {
            Build build = project.getBuild();
            if (build == null) continue;
            build.getPlugins().removeIf(p -> DROPPED.equals(p.getVersion())
                    || drop.contains(p.getGroupId() + ":" + p.getArtifactId()));
        }
    }

    /** The non-blank lines of the overlay's list `name`; empty when there is none. */
    static Set<String> lines(java.io.File repo, String name) {
        Set<String> out = new HashSet<>();
        if (repo == null) return out;
        Path list = repo.toPath().resolve(".swe-forge").resolve(name);
        try {
            for (String line : Files.readAllLines(list, StandardCharsets.UTF_8)) {
                if (!line.isBlank()) out.add(line.trim());
            }
        } catch (IOException absent) {
            // no such list
        }
        return out;
    }
}
