#!/usr/bin/env python3
"""A Maven local repository laid over Debian's (/usr/share/maven-repo), in which the versions
a real project's POMs ask for resolve to the versions Debian packages, so that the project
builds offline with its own POMs untouched. Debian's own tools (maven-repo-helper's
mh_patchpoms and its rules) rewrite the project's POMs instead, which a task's tree must not
show. Run by swe-forge's Java toolchain, the same way in a repository image build and on the
host for the local sandbox (see dockerfiles/java-maven.md, "Real projects").

    python3 maven-overlay.py --debian /usr/share/maven-repo --root OVERLAY \
        --project DIR [--mvn mvn] [--mvn-arg ARG ...] [--max-rounds N] [--aliases FILE]

The overlay holds:
- every directory of Debian's repository, with links to its files;
- for each artifact, a maven-metadata-local.xml listing the versions present, the release
  being the highest that is not `debian` (Debian's parent POMs declare plugins without
  versions, which Maven then resolves from that metadata);
- for a version asked for that Debian does not have: that version's directory, with Debian's
  POM rewritten to the asked version and Debian's other files linked (the project's parent
  POM, its dependencies, its plugins' dependencies);
- for a parent POM Debian does not package at all: an empty POM at the asked version;
- for a dependency the project names without a version (its upstream parent managed it,
  Debian's parent does not): Debian's version in the mapped parent's dependency management;
- for a plugin Debian does not package: an empty plugin at the version asked (or DROPPED),
  so that resolving the project's plugins succeeds, and its name in the drop list;
- for an artifact Debian packages under other coordinates (maven-aliases.txt, beside this
  script): a POM at the asked coordinates relocating to Debian's artifact;
- for a plugin whose goals cannot run here (a goal Debian's version lacks, a check that
  fails): its name in the drop list;
- for a module of a multi-module build that fails when nothing else can be supplied (its
  sources need other versions of Debian's libraries, a JDK's tools.jar): its artifactId in
  the module drop list (never the root project's).

The drop lists are `.swe-forge/dropped-plugins` and `.swe-forge/dropped-modules` in the
overlay; swe-forge's Maven core extension (SweForgeDropPlugins.java, beside this script)
removes those plugins, and every plugin at version DROPPED, from the projects, and those
modules from the build, before Maven plans it. A test run never needs the plugins; a dropped
module's tests do not run, and its sources are not mutated.

Then it builds the project offline (`mvn -o -B -s SETTINGS -DskipTests test`) against the
overlay, supplies what each failure names, and builds again, until the build succeeds or a
failure names nothing it can supply. What it did is written to `.swe-forge/mapping.json` in
the overlay (what a task record's environment names), and the settings file to
`.swe-forge/settings.xml`. Exit status 0 when the project builds, or when everything resolved
and the build stopped at the compiler on the project's own sources (result `compile-error`:
the baseline reports it); 3 when it does not build for want of something (the build's error
lines are in the mapping's `errors`), 2 on bad input.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

DROPPED = "0-dropped"
STATE = ".swe-forge"
# Plugins a test run needs: never dropped (a failure of theirs is the project's failure).
ESSENTIAL = {
    "org.apache.maven.plugins:maven-compiler-plugin",
    "org.apache.maven.plugins:maven-surefire-plugin",
    "org.apache.maven.plugins:maven-resources-plugin",
}
COORD_PART = re.compile(r"^[A-Za-z0-9._-]+$")


def parse_coord(text):
    """`group:artifact[:type[:classifier]]:version` as Maven prints it."""
    parts = text.strip().rstrip(".,;)").split(":")
    if len(parts) == 3:
        g, a, v = parts
    elif len(parts) in (4, 5):
        g, a, v = parts[0], parts[1], parts[-1]
    else:
        return None
    if all(COORD_PART.match(x or "") for x in (g, a, v)):
        return (g, a, v)
    return None


def load_aliases(path):
    """maven-aliases.txt: `asked-group:asked-artifact debian-group:debian-artifact` per line.
    Returns {(g, a): (g2, a2)}; raises ValueError naming the file and line of a bad entry."""
    aliases = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            parts = text.split()
            pairs = [p.split(":") for p in parts]
            if len(parts) != 2 or any(len(p) != 2 or not all(COORD_PART.match(x) for x in p)
                                      for p in pairs):
                raise ValueError("%s:%d: expected `group:artifact group:artifact`, got %r"
                                 % (path, n, text))
            aliases[tuple(pairs[0])] = tuple(pairs[1])
    return aliases


def version_key(v):
    out = []
    for p in re.split(r"[.-]", v):
        out.append((int(p) if p.isdigit() else 0, p))
    return out


def release(versions):
    """The highest version that is not `debian` (nor a stub), else `debian`."""
    real = [v for v in versions if v not in ("debian", DROPPED)]
    if real:
        return max(real, key=version_key)
    if "debian" in versions:
        return "debian"
    return versions[0] if versions else None


def holds_artifact_files(d):
    try:
        return any(n.endswith((".pom", ".jar")) for n in os.listdir(d))
    except OSError:
        return False


def versions_in(d):
    try:
        names = os.listdir(d)
    except OSError:
        return []
    return [n for n in names if os.path.isdir(os.path.join(d, n))
            and holds_artifact_files(os.path.join(d, n))]


def top_level_start(pom, name, root="project"):
    """Where the content of the element `name` that is a child of the root element starts."""
    depth = []
    for m in re.finditer(r"<!--.*?-->|<\?.*?\?>|<(/?)([A-Za-z_][\w.-]*:)?([\w.-]+)[^>]*?(/?)>",
                         pom, re.S):
        if m.group(0).startswith(("<!--", "<?")):
            continue
        closing, local, empty = m.group(1), m.group(3), m.group(4)
        if closing:
            if depth:
                depth.pop()
            continue
        if empty:
            continue
        if local == name and depth == [root]:
            return m.end()
        depth.append(local)
    return None


def top_level_text(pom, name):
    start = top_level_start(pom, name)
    if start is None:
        return None
    end = pom.find("<", start)
    return pom[start:end].strip() if end >= 0 else None


def modules_of(project):
    """{artifactId: folder relative to `project`} of every POM under it (the root's as "")."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(project):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in ("target", "node_modules") and not d.startswith("."))
        if "pom.xml" in filenames:
            try:
                with open(os.path.join(dirpath, "pom.xml"), encoding="utf-8",
                          errors="replace") as f:
                    a = top_level_text(f.read(), "artifactId")
            except OSError:
                continue
            rel = os.path.relpath(dirpath, project)
            if a and a not in found:
                found[a] = "" if rel == "." else rel.replace(os.sep, "/")
    return found


def failed_module(output):
    """The artifactId of the project a failed build names (`... on project P: ...`)."""
    for line in output.splitlines():
        m = re.search(r"Failed to execute goal(?: .*?)? on project ([^\s:]+):", line)
        if m:
            return m.group(1)
    return None


def compile_failed(output):
    """Whether a build stopped at the compiler on the project's own sources."""
    return re.search(r"Failed to execute goal org\.apache\.maven\.plugins:maven-compiler-plugin:"
                     r"[^:\s]+:(compile|testCompile) ", output) is not None


def with_own_version(pom, version):
    start = top_level_start(pom, "version")
    if start is None:
        return None
    end = pom.find("</", start)
    return pom[:start] + version + pom[end:]


def with_managed(pom, entry):
    start = top_level_start(pom, "dependencyManagement")
    if start is not None:
        j = pom.find("<dependencies>", start)
        if j < 0:
            return None
        j += len("<dependencies>")
        return pom[:j] + entry + pom[j:]
    end = pom.rfind("</project>")
    if end < 0:
        return None
    return (pom[:end] + "<dependencyManagement><dependencies>" + entry
            + "</dependencies></dependencyManagement>\n" + pom[end:])


class Overlay:
    def __init__(self, debian, root, aliases=None):
        self.debian = debian
        self.root = root
        self.aliases = aliases or {}
        self.relocated = {}   # "g:a:v" -> Debian's "g:a:version" it stands for
        self.mapped = {}      # "g:a:asked" -> Debian's version (DROPPED for a stub)
        self.managed = {}     # "g:a" -> version
        self.dropped = []     # "g:a", in order
        self.dropped_modules = {}  # artifactId -> folder, of modules left out of the build
        self.parent = None    # (g, a, v) of the first parent mapped

    def create(self):
        if os.path.lexists(self.root):
            shutil.rmtree(self.root)
        for dirpath, dirnames, filenames in os.walk(self.debian, followlinks=True):
            rel = os.path.relpath(dirpath, self.debian)
            out = os.path.normpath(os.path.join(self.root, rel))
            os.makedirs(out, exist_ok=True)
            for n in filenames:
                real = os.path.realpath(os.path.join(dirpath, n))
                if os.path.exists(real):
                    os.symlink(real, os.path.join(out, n))
        os.makedirs(os.path.join(self.root, STATE), exist_ok=True)
        for dirpath, dirnames, _ in os.walk(self.root):
            if any(holds_artifact_files(os.path.join(dirpath, d)) for d in dirnames):
                parts = os.path.relpath(dirpath, self.root).split(os.sep)
                if len(parts) >= 2:
                    self.write_metadata(".".join(parts[:-1]), parts[-1])

    def artifact_dir(self, base, g, a):
        return os.path.join(base, *g.split("."), a)

    def versions(self, g, a):
        return versions_in(self.artifact_dir(self.debian, g, a))

    def write_metadata(self, g, a):
        d = self.artifact_dir(self.root, g, a)
        versions = versions_in(d)
        rel = release(versions)
        if rel is None:
            return
        listed = "".join("<version>%s</version>" % v for v in sorted(versions, key=version_key))
        path = os.path.join(d, "maven-metadata-local.xml")
        if os.path.islink(path):
            os.unlink(path)  # never write through a link into Debian's repository
        with open(path, "w") as f:
            f.write('<?xml version="1.0" encoding="UTF-8"?>\n<metadata><groupId>%s</groupId>'
                    "<artifactId>%s</artifactId><versioning><latest>%s</latest>"
                    "<release>%s</release><versions>%s</versions></versioning></metadata>\n"
                    % (g, a, rel, rel, listed))

    def map(self, coord):
        """Makes g:a:v resolve to Debian's version of g:a; returns that version, or None when
        Debian does not package g:a."""
        g, a, v = coord
        have = self.versions(g, a)
        if v in have:
            return v
        src_version = release(have)
        if src_version is None:
            return None
        src = os.path.join(self.artifact_dir(self.debian, g, a), src_version)
        dst = os.path.join(self.artifact_dir(self.root, g, a), v)
        os.makedirs(dst, exist_ok=True)
        prefix = "%s-%s" % (a, src_version)
        for n in os.listdir(src):
            if not n.startswith(prefix):
                continue
            ext = n[len(prefix):]
            target = os.path.join(dst, "%s-%s%s" % (a, v, ext))
            if os.path.lexists(target):
                os.unlink(target)
            if ext == ".pom":
                with open(os.path.join(src, n), encoding="utf-8", errors="replace") as f:
                    text = with_own_version(f.read(), v)
                if text is None:
                    return None
                with open(target, "w", encoding="utf-8") as f:
                    f.write(text)
            elif ext == ".jar" and not plugin_jar_with_version(os.path.join(src, n), target, v):
                os.symlink(os.path.realpath(os.path.join(src, n)), target)
        self.write_metadata(g, a)
        self.mapped["%s:%s:%s" % coord] = src_version
        return src_version

    def relocate(self, coord):
        """Makes g:a:v, which Debian packages under the coordinates maven-aliases.txt names,
        resolve to Debian's artifact (a POM whose relocation Maven follows); returns Debian's
        coordinates, or None when there is no alias or Debian lacks its target."""
        g, a, v = coord
        target = self.aliases.get((g, a))
        if target is None:
            return None
        version = release(self.versions(*target))
        if version is None:
            return None
        d = os.path.join(self.artifact_dir(self.root, g, a), v)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "%s-%s.pom" % (a, v)), "w") as f:
            f.write("<project><modelVersion>4.0.0</modelVersion><groupId>%s</groupId>"
                    "<artifactId>%s</artifactId><version>%s</version>"
                    "<distributionManagement><relocation><groupId>%s</groupId>"
                    "<artifactId>%s</artifactId><version>%s</version></relocation>"
                    "</distributionManagement></project>\n"
                    % (g, a, v, target[0], target[1], version))
        self.write_metadata(g, a)
        got = "%s:%s:%s" % (target[0], target[1], version)
        self.relocated["%s:%s:%s" % coord] = got
        return got

    def map_parent(self, coord):
        got = self.map(coord)
        if got is not None and got != coord[2] and self.parent is None:
            self.parent = coord
        return got

    def manage(self, g, a):
        if self.parent is None:
            return None
        version = release(self.versions(g, a))
        if version is None:
            return None
        pg, pa, pv = self.parent
        path = os.path.join(self.artifact_dir(self.root, pg, pa), pv, "%s-%s.pom" % (pa, pv))
        with open(path, encoding="utf-8") as f:
            text = f.read()
        entry = ("<dependency><groupId>%s</groupId><artifactId>%s</artifactId>"
                 "<version>%s</version></dependency>" % (g, a, version))
        text = with_managed(text, entry)
        if text is None:
            return None
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        self.managed["%s:%s" % (g, a)] = version
        return version

    def stub_parent(self, g, a, v):
        """An empty parent POM g:a:v, for a parent Debian does not package (an organisation's
        POM of plugin settings and release profiles): the project's own POMs then say all the
        build has. Recorded as mapped to DROPPED."""
        d = os.path.join(self.artifact_dir(self.root, g, a), v)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "%s-%s.pom" % (a, v)), "w") as f:
            f.write("<project><modelVersion>4.0.0</modelVersion><groupId>%s</groupId>"
                    "<artifactId>%s</artifactId><version>%s</version>"
                    "<packaging>pom</packaging></project>\n" % (g, a, v))
        self.write_metadata(g, a)
        self.mapped["%s:%s:%s" % (g, a, v)] = DROPPED

    def stub_plugin(self, g, a, version=DROPPED):
        """An empty plugin g:a at `version`: a POM, and a jar whose descriptor has no goal."""
        d = os.path.join(self.artifact_dir(self.root, g, a), version)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "%s-%s.pom" % (a, version)), "w") as f:
            f.write("<project><modelVersion>4.0.0</modelVersion><groupId>%s</groupId>"
                    "<artifactId>%s</artifactId><version>%s</version>"
                    "<packaging>maven-plugin</packaging></project>\n" % (g, a, version))
        descriptor = ("<plugin><name>%s (not packaged by Debian; swe-forge runs none of its "
                      "goals)</name><groupId>%s</groupId><artifactId>%s</artifactId>"
                      "<version>%s</version><goalPrefix>%s</goalPrefix><mojos></mojos>"
                      "<dependencies></dependencies></plugin>\n" % (a, g, a, version, a))
        with zipfile.ZipFile(os.path.join(d, "%s-%s.jar" % (a, version)), "w") as z:
            z.writestr("META-INF/maven/plugin.xml", descriptor)
        self.write_metadata(g, a)
        self.mapped["%s:%s:%s" % (g, a, version)] = DROPPED
        self.drop(g, a)

    def drop(self, g, a):
        ga = "%s:%s" % (g, a)
        if ga in ESSENTIAL or ga in self.dropped:
            return False
        self.dropped.append(ga)
        with open(os.path.join(self.root, STATE, "dropped-plugins"), "w") as f:
            f.write("".join(x + "\n" for x in self.dropped))
        return True

    def drop_module(self, artifact, folder):
        if artifact in self.dropped_modules:
            return False
        self.dropped_modules[artifact] = folder
        with open(os.path.join(self.root, STATE, "dropped-modules"), "w") as f:
            f.write("".join(x + "\n" for x in sorted(self.dropped_modules)))
        return True

    def settings(self):
        path = os.path.join(self.root, STATE, "settings.xml")
        with open(path, "w") as f:
            f.write(settings_xml(os.path.abspath(self.root)))
        return path


def plugin_jar_with_version(src, dst, version):
    """A plugin's jar names its version in META-INF/maven/plugin.xml, which Maven checks
    against the version it resolved: writes a copy of `src` at `dst` with that version set to
    `version`. False (nothing written) when `src` is not a plugin."""
    try:
        with zipfile.ZipFile(src) as z:
            if "META-INF/maven/plugin.xml" not in z.namelist():
                return False
            with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as out:
                for info in z.infolist():
                    data = z.read(info.filename)
                    if info.filename == "META-INF/maven/plugin.xml":
                        text = data.decode("utf-8")
                        start = top_level_start(text, "version", root="plugin")
                        if start is not None:
                            end = text.find("</", start)
                            text = text[:start] + version + text[end:]
                        data = text.encode("utf-8")
                    out.writestr(info, data)
        return True
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError):
        return False


def settings_xml(local_repo):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            "<!-- Offline builds against swe-forge's overlay of Debian's Maven repository. -->\n"
            '<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">\n'
            "  <localRepository>%s</localRepository>\n"
            "  <offline>true</offline>\n"
            "  <interactiveMode>false</interactiveMode>\n"
            "</settings>\n" % local_repo)


def missing_in(output):
    """What an offline Maven build says it could not find or could not run, each once:
    ("parent", coord), ("plugin-version", g, a), ("plugin", coord), ("artifact", coord),
    ("unmanaged", g, a), ("goal", g, a)."""
    found = []

    def push(item):
        if item not in found:
            found.append(item)

    for line in output.splitlines():
        if "Non-resolvable parent POM" in line or "Non-resolvable import POM" in line:
            m = re.search(r"the artifact (\S+)", line) or re.search(r"Could not find artifact (\S+)", line)
            c = m and parse_coord(m.group(1))
            if c:
                push(("parent" if "parent POM" in line else "artifact", c))
            continue
        m = re.search(r"Error resolving version for plugin '([^':]+):([^']+)'", line)
        if m:
            push(("plugin-version", m.group(1), m.group(2)))
            continue
        m = re.search(r"'dependencies\.dependency\.version' for ([^:\s]+):([^:\s]+)\S* is missing", line)
        if m:
            push(("unmanaged", m.group(1), m.group(2)))
            continue
        m = re.search(r"Plugin (\S+) or one of its dependencies could not be resolved", line)
        plugin = m and parse_coord(m.group(1))
        m = re.search(r"The following artifacts could not be resolved: (.*?): (Cannot access|Could not)", line)
        if m:
            for part in m.group(1).split(","):
                c = parse_coord(part)
                if c:
                    push(("plugin" if plugin and c[:2] == plugin[:2] else "artifact", c))
            continue
        m = re.search(r"(?:the artifact|Could not find artifact) (\S+)", line)
        if m and ("has not been downloaded" in line or "Could not find artifact" in line):
            c = parse_coord(m.group(1))
            if c:
                push(("plugin" if plugin and c[:2] == plugin[:2] else "artifact", c))
            continue
        m = re.search(r"Could not find goal '[^']+' in plugin ([^:\s]+):([^:\s]+):", line)
        if m:
            push(("goal", m.group(1), m.group(2)))
            continue
        m = re.search(r"Failed to execute goal ([^:\s]+):([^:\s]+):[^:\s]+:\S+ ", line)
        if m:
            push(("goal", m.group(1), m.group(2)))
    return found


def supply(overlay, item):
    """Supplies one missing thing; True when the overlay changed."""
    kind = item[0]
    if kind == "parent":
        key = "%s:%s:%s" % item[1]
        if key in overlay.mapped:
            return False
        if overlay.versions(*item[1][:2]):
            return overlay.map_parent(item[1]) not in (None, item[1][2])
        overlay.stub_parent(*item[1])
        return True
    if kind in ("artifact", "plugin"):
        g, a, v = item[1]
        key = "%s:%s:%s" % item[1]
        if key in overlay.mapped or key in overlay.relocated:
            return False
        if overlay.versions(g, a):
            return overlay.map(item[1]) not in (None, v)
        if overlay.relocate(item[1]) is not None:
            return True
        if kind == "plugin" or a.endswith("-plugin") or "-plugin-" in a:
            overlay.stub_plugin(g, a, v)
            return True
        return False
    if kind == "plugin-version":
        _, g, a = item
        if overlay.versions(g, a) or "%s:%s:%s" % (g, a, DROPPED) in overlay.mapped:
            return False
        overlay.stub_plugin(g, a)
        return True
    if kind == "unmanaged":
        _, g, a = item
        return "%s:%s" % (g, a) not in overlay.managed and overlay.manage(g, a) is not None
    if kind == "goal":
        return overlay.drop(item[1], item[2])
    return False


def error_lines(output, limit=12):
    lines = [l for l in output.splitlines() if l.startswith("[ERROR]") and l.strip() != "[ERROR]"]
    return lines[:limit]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--debian", default="/usr/share/maven-repo")
    p.add_argument("--root", required=True)
    p.add_argument("--project", required=True)
    p.add_argument("--mvn", default="mvn")
    p.add_argument("--mvn-arg", action="append", default=[])
    p.add_argument("--max-rounds", type=int, default=24)
    here = globals().get("__file__")  # absent when the script is given with `python3 -c`
    p.add_argument("--aliases", default=here and os.path.join(
        os.path.dirname(os.path.abspath(here)), "maven-aliases.txt"))
    args = p.parse_args(argv)
    if not os.path.isdir(args.debian):
        print("maven-overlay: no Debian Maven repository at %s" % args.debian, file=sys.stderr)
        return 2
    try:
        aliases = load_aliases(args.aliases) if args.aliases else {}
    except (OSError, ValueError) as e:
        print("maven-overlay: %s" % e, file=sys.stderr)
        return 2
    overlay = Overlay(args.debian, args.root, aliases)
    overlay.create()
    settings = overlay.settings()
    result, rounds, errors = "gave-up", 0, []
    for rounds in range(1, args.max_rounds + 1):
        cmd = [args.mvn, "-o", "-B", "-s", settings] + args.mvn_arg + ["-DskipTests", "test"]
        run = subprocess.run(cmd, cwd=args.project, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        output = run.stdout.decode("utf-8", "replace")
        if run.returncode == 0:
            result, errors = "built", []
            break
        errors = error_lines(output)
        changed = [item for item in missing_in(output) if supply(overlay, item)]
        if not changed:
            # A module of a multi-module build that cannot build here (its sources need other
            # versions of Debian's libraries, a JDK 8 tools.jar, a Maven plugin API) is left
            # out; never the root project, whose failure is the project's.
            module = failed_module(output)
            folders = modules_of(args.project)
            if module and folders.get(module) and overlay.drop_module(module, folders[module]):
                changed = [("module", module)]
        print("maven-overlay: round %d: %s" % (
            rounds, ", ".join(":".join(x if isinstance(x, str) else ":".join(x) for x in item[1:])
                              + " (" + item[0] + ")" for item in changed) or "nothing to supply"),
            file=sys.stderr)
        if not changed:
            # Everything resolved and the project's own sources do not compile: that is for
            # the baseline to report (with the compiler's message), not a missing dependency.
            result = "compile-error" if compile_failed(output) else "stuck"
            break
    mapping = {
        "result": result,
        "rounds": rounds,
        "mapped": overlay.mapped,
        "relocated": overlay.relocated,
        "managed": overlay.managed,
        "dropped_plugins": overlay.dropped,
        "dropped_modules": overlay.dropped_modules,
        "errors": errors,
    }
    with open(os.path.join(args.root, STATE, "mapping.json"), "w") as f:
        json.dump(mapping, f, indent=1, sort_keys=True)
    if result == "compile-error":
        print("maven-overlay: every dependency resolved; the project's sources do not compile "
              "(the baseline reports it)", file=sys.stderr)
        return 0
    if result != "built":
        print("maven-overlay: the project does not build offline against Debian's Maven "
              "repository (%s after %d rounds):" % (result, rounds), file=sys.stderr)
        for l in errors:
            print(l, file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
