# swe-forge: reads the effective configuration of Surefire's `test` mojo from a `mvn -X` log
# (ANSI colours and `[DEBUG] ` prefixes already removed; the block between "Configuring mojo
# '...maven-surefire-plugin:...:test' with" and "-- end configuration --"), as the Maven
# adapter's fast path needs it (src/runner/maven/fast.rs). Parent POMs included: Maven prints
# the merged configuration. Variables: src (the project's folder), inc and exc (files the
# class-name regexes of Surefire's includes and excludes are written to, as JUnit's console
# launcher takes them), and argl (the file Surefire's argLine, if any, is written to: JVM
# options for the launcher's JVM). Prints nothing when the fast path reproduces this configuration, else
# one line: the settings it does not (the caller falls back to plain Maven).
#
# Surefire's defaults: includes **/Test*.java **/*Test.java **/*Tests.java **/*TestCase.java,
# excludes **/*$* (replaced, not extended, by a configured list).

# A Surefire include or exclude pattern as a class-name regex ("" when it cannot be read:
# %regex[...], a path with a suffix other than .java or .class).
function conv(p,    r, i, c) {
    gsub(/^ +| +$/, "", p)
    if (p ~ /^%regex/ || p ~ /^!/) return ""
    sub(/\.(java|class)$/, "", p)
    if (p ~ /\./) return ""
    gsub("/", ".", p)
    r = ""
    i = 1
    while (i <= length(p)) {
        c = substr(p, i, 1)
        if (substr(p, i, 3) == "**.") { r = r "(.*[.])?"; i += 3; continue }
        if (substr(p, i, 2) == "**") { r = r ".*"; i += 2; continue }
        if (c == "*") r = r "[^.]*"
        else if (c == "?") r = r "[^.]"
        else if (c == ".") r = r "[.]"
        else if (c == "$") r = r "[$]"
        else if (c ~ /[A-Za-z0-9_-]/) r = r c
        else return ""
        i++
    }
    return r
}

# "[a, b]" as one regex "^(ra|rb)$"; "" when a pattern cannot be read.
function list(v,    n, parts, i, r, out) {
    sub(/^\[/, "", v); sub(/\]$/, "", v)
    n = split(v, parts, ",")
    out = ""
    for (i = 1; i <= n; i++) {
        if (parts[i] ~ /^ *$/) continue
        r = conv(parts[i])
        if (r == "") return ""
        out = out (out == "" ? "" : "|") r
    }
    return out == "" ? "" : "^(" out ")$"
}

BEGIN {
    includes = "^(.*[.])?(Test[^.]*|[^.]*Test|[^.]*Tests|[^.]*TestCase)$"
    excludes = ".*[$].*"
    bad = ""
}

/^Configuring mojo '?org\.apache\.maven\.plugins:maven-surefire-plugin:[^:]*:test'? with/ {
    if (!done) inblock = 1
    next
}
inblock && /^-- end configuration --/ { inblock = 0; done = 1; next }
inblock && /^ *\([sf]\) [A-Za-z]+ = / {
    line = $0
    sub(/^ *\([sf]\) /, "", line)
    name = line; sub(/ = .*$/, "", name)
    val = line; sub(/^[A-Za-z]+ = /, "", val)
    empty = (val == "" || val == "[]" || val == "{}" || val == "null")
    if (name == "includes" || name == "excludes") {
        if (empty) next
        r = list(val)
        if (r == "") { bad = bad " " name "=" val; next }
        if (name == "includes") includes = r; else excludes = r
        next
    }
    if (name == "argLine") {
        # JVM options for the test JVM: the launcher's JVM takes them as they are, unless they
        # need Surefire's late replacement (@{...}), an unresolved property or shell quoting.
        if (empty) next
        if (val ~ /@\{|\$\{|["'`\\$;&|<>()]/) { bad = bad " argLine=" val; next }
        argline = val
        next
    }
    if (name ~ /^(test|groups|excludedGroups|systemPropertyVariables|systemProperties|environmentVariables|properties|includesFile|excludesFile|parallel|jvm|suiteXmlFiles|additionalClasspathElements|classpathDependencyExcludes|classpathDependencyScopeExclude|dependenciesToScan|testNGArtifactName_)$/ && !empty)
        bad = bad " " name
    else if (name == "testSourceDirectory" && val != src "/src/test/java") bad = bad " " name
    else if (name == "testClassesDirectory" && val != src "/target/test-classes") bad = bad " " name
    else if (name == "workingDirectory" && val != src) bad = bad " " name
    else if (name == "reuseForks" && val == "false") bad = bad " reuseForks=false"
}

END {
    if (bad != "") { print "Surefire is configured with" bad; exit }
    print includes > inc
    print excludes > exc
    printf "%s", argline > argl
}
