//! The overlay script on a small Debian-like repository, driven by a stand-in for Maven that
//! fails with Maven's own messages until the overlay supplies what each names.

use super::*;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

fn put(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// A Debian-like repository: commons-parent 56 and `debian`, junit 4.13.2, hamcrest 2.2, and
/// a plugin with one version whose jar carries a plugin descriptor.
fn debian_repo(dir: &Path) {
    let parent = "<project><modelVersion>4.0.0</modelVersion>\n<parent><groupId>org.apache</groupId>\
                  <artifactId>apache</artifactId><version>29</version></parent>\n\
                  <groupId>org.apache.commons</groupId><artifactId>commons-parent</artifactId>\
                  <version>56</version><packaging>pom</packaging>\
                  <dependencies><dependency><version>9</version></dependency></dependencies></project>\n";
    put(
        dir,
        "org/apache/commons/commons-parent/56/commons-parent-56.pom",
        parent,
    );
    put(
        dir,
        "org/apache/commons/commons-parent/debian/commons-parent-debian.pom",
        parent,
    );
    put(
        dir,
        "junit/junit/4.13.2/junit-4.13.2.pom",
        "<project><version>4.13.2</version></project>",
    );
    put(dir, "junit/junit/4.13.2/junit-4.13.2.jar", "jar");
    put(
        dir,
        "org/hamcrest/hamcrest/2.2/hamcrest-2.2.pom",
        "<project><version>2.2</version></project>",
    );
    put(dir, "org/hamcrest/hamcrest/2.2/hamcrest-2.2.jar", "jar");
    put(
        dir,
        "javax/xml/bind/jaxb-api/2.3.1/jaxb-api-2.3.1.pom",
        "<project><version>2.3.1</version></project>",
    );
    put(
        dir,
        "javax/xml/bind/jaxb-api/2.3.1/jaxb-api-2.3.1.jar",
        "jar",
    );
    let plugin = dir.join("org/apache/felix/maven-bundle-plugin/3.5.1");
    put(
        &plugin,
        "maven-bundle-plugin-3.5.1.pom",
        "<project><version>3.5.1</version></project>",
    );
    let jar = fs::File::create(plugin.join("maven-bundle-plugin-3.5.1.jar")).unwrap();
    let mut zip = zip::ZipWriter::new(jar);
    zip.start_file::<_, ()>("META-INF/maven/plugin.xml", Default::default())
        .unwrap();
    std::io::Write::write_all(
        &mut zip,
        b"<plugin><name>bundle</name><groupId>org.apache.felix</groupId>\
          <artifactId>maven-bundle-plugin</artifactId><version>3.5.1</version><mojos/>\
          <dependencies><dependency><version>1.0</version></dependency></dependencies></plugin>",
    )
    .unwrap();
    zip.start_file::<_, ()>("org/apache/felix/Bundle.class", Default::default())
        .unwrap();
    std::io::Write::write_all(&mut zip, b"class").unwrap();
    zip.finish().unwrap();
}

/// A stand-in for `mvn` that reads the local repository from the settings (`-s`) and fails,
/// in this order, until the overlay has: commons-parent 52, a stand-in for the unpackaged
/// rat plugin, junit 4.12, hamcrest managed by the parent, bundle plugin 5.1.8, the enforcer
/// plugin dropped. Each call appends a line to `calls`.
const FAKE_MVN: &str = r#"#!/bin/bash
while [ $# -gt 0 ]; do [ "$1" = -s ] && S=$2; shift; done
R=$(sed -n 's:.*<localRepository>\(.*\)</localRepository>.*:\1:p' "$S")
echo call >> "$(dirname "$0")/calls"
P=$R/org/apache/commons/commons-parent/52/commons-parent-52.pom
if [ ! -f "$P" ]; then
  echo "[FATAL] Non-resolvable parent POM for a:b:1: Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact org.apache.commons:commons-parent:pom:52 has not been downloaded from it before. and 'parent.relativePath' points at no local POM @ line 5, column 11"; exit 1
fi
if [ ! -f "$R/org/apache/rat/apache-rat-plugin/0-dropped/apache-rat-plugin-0-dropped.jar" ]; then
  echo "[ERROR] Error resolving version for plugin 'org.apache.rat:apache-rat-plugin' from the repositories [local ($R), central (https://repo.maven.apache.org/maven2)]: Plugin not found in any plugin repository -> [Help 1]"; exit 1
fi
if [ ! -e "$R/junit/junit/4.12/junit-4.12.jar" ]; then
  echo "[ERROR] Failed to execute goal on project b: Could not resolve dependencies for project a:b:jar:1: The following artifacts could not be resolved: junit:junit:jar:4.12, org.mockito:mockito-inline:jar:4.8.0: Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact junit:junit:jar:4.12 has not been downloaded from it before. -> [Help 1]"; exit 1
fi
if ! grep -q '<artifactId>hamcrest</artifactId><version>2.2</version>' "$P"; then
  echo "[ERROR] 'dependencies.dependency.version' for org.hamcrest:hamcrest:jar is missing. @ line 40, column 17"; exit 1
fi
if [ ! -e "$R/org/apache/felix/maven-bundle-plugin/5.1.8/maven-bundle-plugin-5.1.8.jar" ]; then
  echo "[ERROR] Plugin org.apache.felix:maven-bundle-plugin:5.1.8 or one of its dependencies could not be resolved: Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact org.apache.felix:maven-bundle-plugin:jar:5.1.8 has not been downloaded from it before. -> [Help 1]"; exit 1
fi
if ! grep -qx 'org.apache.maven.plugins:maven-enforcer-plugin' "$R/.swe-forge/dropped-plugins"; then
  echo "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-enforcer-plugin:3.0.0:enforce (enforce-maven) on project b: Some Enforcer rules have failed. -> [Help 1]"; exit 1
fi
if [ -n "$ASK_ALIAS" ] && [ ! -f "$R/jakarta/xml/bind/jakarta.xml.bind-api/2.3.3/jakarta.xml.bind-api-2.3.3.pom" ]; then
  echo "[ERROR] Failed to execute goal on project b: Could not resolve dependencies for project a:b:jar:1: Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact jakarta.xml.bind:jakarta.xml.bind-api:jar:2.3.3 has not been downloaded from it before. -> [Help 1]"; exit 1
fi
if [ -n "$FAIL_MODULE" ] && ! grep -qx 'b-tools' "$R/.swe-forge/dropped-modules" 2>/dev/null; then
  echo "[ERROR] Failed to execute goal on project b-tools: Could not resolve dependencies for project a:b-tools:jar:1: Could not find artifact jdk:tools:jar:5.0 at specified path /usr/lib/jvm/java-17-openjdk-amd64/../lib/tools.jar -> [Help 1]"; exit 1
fi
if [ -n "$FAIL_ROOT" ]; then
  echo "[ERROR] Failed to execute goal on project b: Could not resolve dependencies for project a:b:jar:1: Could not find artifact jdk:tools:jar:5.0 at specified path /usr/lib/jvm/java-17-openjdk-amd64/../lib/tools.jar -> [Help 1]"; exit 1
fi
if [ -n "$FAIL_COMPILE" ]; then
  echo "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.10.1:compile (default-compile) on project b: Compilation failure"; exit 1
fi
echo "[INFO] BUILD SUCCESS"
"#;

struct Setup {
    _tmp: tempfile::TempDir,
    debian: PathBuf,
    root: PathBuf,
    project: PathBuf,
    bin: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let debian = tmp.path().join("debian");
    debian_repo(&debian);
    let bin = tmp.path().join("bin");
    put(&bin, "mvn", FAKE_MVN);
    fs::set_permissions(
        bin.join("mvn"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let project = tmp.path().join("project");
    put(
        &project,
        "pom.xml",
        "<project><artifactId>b</artifactId><modules><module>tools</module></modules></project>",
    );
    put(
        &project,
        "tools/pom.xml",
        "<project><parent><artifactId>b</artifactId></parent><artifactId>b-tools</artifactId></project>",
    );
    let root = tmp.path().join("overlay");
    Setup {
        debian,
        root,
        project,
        bin,
        _tmp: tmp,
    }
}

fn run_script(s: &Setup, env: &[(&str, &str)]) -> std::process::Output {
    run_script_with(s, env, &[])
}

fn run_script_with(s: &Setup, env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new("python3");
    cmd.arg("-c")
        .arg(OVERLAY_PY)
        .arg("--debian")
        .arg(&s.debian)
        .arg("--root")
        .arg(&s.root)
        .arg("--project")
        .arg(&s.project)
        .arg("--mvn")
        .arg(s.bin.join("mvn"))
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("python3 runs")
}

#[test]
fn the_script_supplies_what_each_build_names_until_it_builds() {
    let s = setup();
    let out = run_script(&s, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let m = Mapping::read(&s.root).unwrap();
    assert_eq!(m.result, "built");
    assert_eq!(m.rounds, 7, "{stderr}");
    assert_eq!(
        fs::read_to_string(s.bin.join("calls"))
            .unwrap()
            .lines()
            .count(),
        7
    );
    assert_eq!(m.mapped["org.apache.commons:commons-parent:52"], "56");
    assert_eq!(m.mapped["junit:junit:4.12"], "4.13.2");
    assert_eq!(
        m.mapped["org.apache.rat:apache-rat-plugin:0-dropped"],
        DROPPED
    );
    assert_eq!(
        m.mapped["org.apache.felix:maven-bundle-plugin:5.1.8"],
        "3.5.1"
    );
    // Not packaged and not a plugin: nothing to supply for it.
    assert!(!m.mapped.keys().any(|k| k.contains("mockito")), "{m:?}");
    assert_eq!(m.managed["org.hamcrest:hamcrest"], "2.2");
    assert_eq!(
        m.dropped_plugins,
        vec![
            "org.apache.rat:apache-rat-plugin".to_string(),
            "org.apache.maven.plugins:maven-enforcer-plugin".to_string()
        ]
    );
    assert!(m.errors.is_empty());
    assert!(!m.is_identity());

    // The mapped parent: its own version is the asked one; its parent's and dependencies'
    // stay Debian's; it manages hamcrest.
    let pom = fs::read_to_string(
        s.root
            .join("org/apache/commons/commons-parent/52/commons-parent-52.pom"),
    )
    .unwrap();
    assert!(
        pom.contains("<artifactId>commons-parent</artifactId><version>52</version>"),
        "{pom}"
    );
    assert!(pom.contains("<version>29</version></parent>"), "{pom}");
    assert!(pom.contains("<dependency><version>9</version>"), "{pom}");
    assert_eq!(pom.matches("<dependencyManagement>").count(), 1, "{pom}");
    // A mapped jar is Debian's file.
    assert_eq!(
        fs::canonicalize(s.root.join("junit/junit/4.12/junit-4.12.jar")).unwrap(),
        fs::canonicalize(s.debian.join("junit/junit/4.13.2/junit-4.13.2.jar")).unwrap()
    );
    // A mapped plugin's descriptor names the version Maven resolved, the rest of its jar
    // as Debian's.
    let jar = fs::File::open(
        s.root
            .join("org/apache/felix/maven-bundle-plugin/5.1.8/maven-bundle-plugin-5.1.8.jar"),
    )
    .unwrap();
    let mut zip = zip::ZipArchive::new(jar).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut zip.by_name("META-INF/maven/plugin.xml").unwrap(),
        &mut text,
    )
    .unwrap();
    assert!(
        text.contains("<artifactId>maven-bundle-plugin</artifactId><version>5.1.8</version>"),
        "{text}"
    );
    assert!(
        text.contains("<dependency><version>1.0</version>"),
        "{text}"
    );
    assert!(zip.by_name("org/apache/felix/Bundle.class").is_ok());
    // The stand-in plugin: no goal, listed as the release for version-less declarations.
    let rat = s.root.join("org/apache/rat/apache-rat-plugin");
    let meta = fs::read_to_string(rat.join("maven-metadata-local.xml")).unwrap();
    assert!(
        meta.contains(&format!("<release>{DROPPED}</release>")),
        "{meta}"
    );
    let jar = fs::File::open(
        rat.join(DROPPED)
            .join(format!("apache-rat-plugin-{DROPPED}.jar")),
    )
    .unwrap();
    let mut zip = zip::ZipArchive::new(jar).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut zip.by_name("META-INF/maven/plugin.xml").unwrap(),
        &mut text,
    )
    .unwrap();
    assert!(text.contains("<mojos></mojos>"), "{text}");
    // Metadata for Debian's artifacts: the highest version that is not `debian`.
    let meta = fs::read_to_string(
        s.root
            .join("org/apache/commons/commons-parent/maven-metadata-local.xml"),
    )
    .unwrap();
    assert!(meta.contains("<release>56</release>"), "{meta}");
    // The extension's drop list, and the settings the builds used.
    assert_eq!(
        fs::read_to_string(s.root.join(STATE_DIR).join("dropped-plugins")).unwrap(),
        "org.apache.rat:apache-rat-plugin\norg.apache.maven.plugins:maven-enforcer-plugin\n"
    );
    let settings = fs::read_to_string(s.root.join(STATE_DIR).join("settings.xml")).unwrap();
    assert!(settings.contains(&format!(
        "<localRepository>{}</localRepository>",
        s.root.display()
    )));
    assert!(settings.contains("<offline>true</offline>"));
    // Nothing was written into Debian's repository.
    assert!(!s
        .debian
        .join("org/apache/commons/commons-parent/52")
        .exists());
    assert!(!s
        .debian
        .join("junit/junit/maven-metadata-local.xml")
        .exists());
    assert!(!s.debian.join("org/apache/rat").exists());
}

#[test]
fn a_failure_that_names_nothing_to_supply_stops_with_its_errors() {
    let s = setup();
    let out = run_script(&s, &[("FAIL_ROOT", "1")]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("does not build offline"), "{stderr}");
    assert!(stderr.contains("jdk:tools:jar:5.0"), "{stderr}");
    let m = Mapping::read(&s.root).unwrap();
    assert_eq!(m.result, "stuck");
    assert_eq!(m.errors.len(), 1, "{m:?}");
    // Made afresh each time.
    let again = run_script(&s, &[]);
    assert!(again.status.success());
    assert_eq!(Mapping::read(&s.root).unwrap().result, "built");
}

#[test]
fn sources_that_do_not_compile_are_the_baseline_s_to_report() {
    let s = setup();
    let out = run_script(&s, &[("FAIL_COMPILE", "1")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let m = Mapping::read(&s.root).unwrap();
    assert_eq!(m.result, "compile-error");
    // The compiler is never dropped: its failure is the project's.
    assert!(
        !m.dropped_plugins.iter().any(|p| p.contains("compiler")),
        "{m:?}"
    );
    assert!(
        m.errors.iter().any(|e| e.contains("Compilation failure")),
        "{m:?}"
    );
}

#[test]
fn an_artifact_debian_packages_under_other_coordinates_is_relocated_to_it() {
    let s = setup();
    let aliases = s.project.join("../aliases.txt");
    fs::write(
        &aliases,
        "# asked  debian\njakarta.xml.bind:jakarta.xml.bind-api  javax.xml.bind:jaxb-api\n",
    )
    .unwrap();
    let out = run_script_with(
        &s,
        &[("ASK_ALIAS", "1")],
        &["--aliases", aliases.to_str().unwrap()],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let m = Mapping::read(&s.root).unwrap();
    assert_eq!(
        m.relocated
            .get("jakarta.xml.bind:jakarta.xml.bind-api:2.3.3")
            .map(String::as_str),
        Some("javax.xml.bind:jaxb-api:2.3.1"),
        "{m:?}"
    );
    let pom = fs::read_to_string(
        s.root
            .join("jakarta/xml/bind/jakarta.xml.bind-api/2.3.3/jakarta.xml.bind-api-2.3.3.pom"),
    )
    .unwrap();
    assert!(pom.contains("<relocation><groupId>javax.xml.bind</groupId><artifactId>jaxb-api</artifactId><version>2.3.1</version></relocation>"), "{pom}");
    assert!(!m.is_identity());

    // Without the alias the same build is stuck on that artifact.
    let out = run_script(&s, &[("ASK_ALIAS", "1")]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("jakarta.xml.bind-api"));
}

#[test]
fn a_bad_alias_line_is_bad_input_naming_its_file_and_line() {
    let s = setup();
    let aliases = s.project.join("../aliases.txt");
    fs::write(
        &aliases,
        "a:b c:d\njakarta.xml.bind-api javax.xml.bind:jaxb-api\n",
    )
    .unwrap();
    let out = run_script_with(&s, &[], &["--aliases", aliases.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("aliases.txt:2"), "{stderr}");
}

#[test]
fn the_shipped_aliases_load() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("maven-aliases.txt");
    fs::write(&path, ALIASES_TXT).unwrap();
    let code = format!(
        "{OVERLAY_PY}\nimport sys as _s\n_a = load_aliases({:?})\nprint(len(_a))\n",
        path.to_str().unwrap()
    )
    .replace("if __name__ == \"__main__\":", "if False:");
    let out = Command::new("python3")
        .arg("-c")
        .arg(code)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n: usize = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert!(n >= 3, "{n}");
}

#[test]
fn a_module_that_cannot_build_is_left_out_but_never_the_root_project() {
    let s = setup();
    let out = run_script(&s, &[("FAIL_MODULE", "1")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let m = Mapping::read(&s.root).unwrap();
    assert_eq!(
        m.dropped_modules.get("b-tools").map(String::as_str),
        Some("tools"),
        "{m:?}"
    );
    assert_eq!(
        fs::read_to_string(s.root.join(".swe-forge/dropped-modules")).unwrap(),
        "b-tools\n"
    );
    // The root project's own failure is the project's: stuck, nothing dropped for it.
    let out = run_script(&s, &[("FAIL_ROOT", "1")]);
    assert_eq!(out.status.code(), Some(3));
    let m = Mapping::read(&s.root).unwrap();
    assert!(m.dropped_modules.is_empty(), "{m:?}");
    assert_eq!(m.result, "stuck");
}

#[test]
fn no_debian_repository_is_bad_input() {
    let s = setup();
    let out = Command::new("python3")
        .arg("-c")
        .arg(OVERLAY_PY)
        .args(["--debian", "/nonexistent/maven-repo", "--root"])
        .arg(&s.root)
        .arg("--project")
        .arg(&s.project)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn mappings_read_back() {
    let m = Mapping::parse(
        r#"{"result": "built", "rounds": 1, "mapped": {}, "managed": {}, "dropped_plugins": [], "errors": []}"#,
    )
    .unwrap();
    assert!(m.is_identity());
    assert!(Mapping::read(Path::new("/nonexistent"))
        .unwrap_err()
        .contains("mapping.json"));
}

#[test]
fn the_extension_script_compiles_into_the_named_folder() {
    let s = extension_build_script("/s", "\"$M/lib/ext\"");
    assert!(
        s.contains("javac --release 11 -nowarn -cp \"$M/lib/*\""),
        "{s}"
    );
    assert!(
        s.contains("jar cf \"$M/lib/ext\"/swe-forge-maven.jar"),
        "{s}"
    );
    assert!(EXTENSION_JAVA.contains("class SweForgeDropPlugins"));
    assert!(EXTENSION_COMPONENTS.contains("sweforge.SweForgeDropPlugins"));
}

/// The extension, compiled by its script against this host's Maven, drops the listed
/// plugins from a real build (skips with a notice where there is no Maven).
#[test]
fn the_extension_drops_listed_plugins_from_a_real_build() {
    if Command::new("mvn")
        .arg("-v")
        .output()
        .map(|o| !o.status.success())
        .unwrap_or(true)
        || !Path::new("/usr/share/maven-repo").is_dir()
    {
        eprintln!("skipped: no Maven with Debian's repository on this host");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    put(&src, "SweForgeDropPlugins.java", EXTENSION_JAVA);
    put(&src, "components.xml", EXTENSION_COMPONENTS);
    let out = tmp.path().join("ext");
    let script = extension_build_script(
        &crate::sandbox::shell_quote(&src.display().to_string()),
        &crate::sandbox::shell_quote(&out.display().to_string()),
    );
    let built = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    // A project whose validate phase runs a plugin goal that does not exist.
    let project = tmp.path().join("project");
    put(
        &project,
        "pom.xml",
        "<project><modelVersion>4.0.0</modelVersion><groupId>x</groupId><artifactId>y</artifactId>\
         <version>1</version><packaging>pom</packaging><build><plugins><plugin>\
         <groupId>org.apache.maven.plugins</groupId><artifactId>maven-clean-plugin</artifactId>\
         <executions><execution><phase>validate</phase><goals><goal>no-such-goal</goal></goals>\
         </execution></executions></plugin></plugins></build></project>",
    );
    let repo = tmp.path().join("repo");
    // A local repository of links to Debian's, with the drop list.
    let mirror = Command::new("cp")
        .arg("-rs")
        .arg("/usr/share/maven-repo")
        .arg(&repo)
        .status()
        .unwrap();
    assert!(mirror.success());
    let settings = tmp.path().join("settings.xml");
    fs::write(
        &settings,
        format!(
            "<settings><localRepository>{}</localRepository><offline>true</offline></settings>",
            repo.display()
        ),
    )
    .unwrap();
    let mvn = |ext: bool| {
        let mut c = Command::new("mvn");
        c.current_dir(&project)
            .arg("-o")
            .arg("-B")
            .arg("-s")
            .arg(&settings);
        if ext {
            c.arg(format!(
                "-Dmaven.ext.class.path={}",
                out.join(EXTENSION_JAR).display()
            ));
        }
        c.arg("validate");
        let o = c.output().unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).to_string(),
        )
    };
    let (ok, log) = mvn(true);
    assert!(!ok, "without a drop list the goal runs and fails: {log}");
    assert!(log.contains("no-such-goal"), "{log}");
    put(
        &repo,
        ".swe-forge/dropped-plugins",
        "org.apache.maven.plugins:maven-clean-plugin\n",
    );
    let (ok, log) = mvn(true);
    assert!(ok, "{log}");
    let (ok, _) = mvn(false);
    assert!(!ok, "without the extension the list changes nothing");
}
