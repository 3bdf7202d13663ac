//! The overlay on a small Debian-like repository, and Maven's messages read back.

use super::*;

/// A Debian-like repository: commons-parent 56 and `debian`, junit 4.13.2, and a plugin
/// with one version.
fn debian_repo(dir: &Path) {
    let put = |rel: &str, text: &str| {
        let p = dir.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    let parent = "<project><modelVersion>4.0.0</modelVersion>\n<parent><groupId>org.apache</groupId>\
                  <artifactId>apache</artifactId><version>29</version></parent>\n\
                  <groupId>org.apache.commons</groupId><artifactId>commons-parent</artifactId>\
                  <version>56</version><packaging>pom</packaging>\
                  <dependencies><dependency><version>9</version></dependency></dependencies></project>\n";
    put(
        "org/apache/commons/commons-parent/56/commons-parent-56.pom",
        parent,
    );
    put(
        "org/apache/commons/commons-parent/debian/commons-parent-debian.pom",
        parent,
    );
    put(
        "junit/junit/4.13.2/junit-4.13.2.pom",
        "<project><version>4.13.2</version></project>",
    );
    put("junit/junit/4.13.2/junit-4.13.2.jar", "jar");
    put(
        "org/apache/felix/maven-bundle-plugin/3.5.1/maven-bundle-plugin-3.5.1.pom",
        "<project><version>3.5.1</version></project>",
    );
    put(
        "org/apache/felix/maven-bundle-plugin/3.5.1/maven-bundle-plugin-3.5.1.jar",
        "jar",
    );
}

#[test]
fn asked_versions_resolve_to_debian_s_and_debian_s_tree_is_not_written() {
    let tmp = tempfile::tempdir().unwrap();
    let debian = tmp.path().join("debian");
    debian_repo(&debian);
    let root = tmp.path().join("overlay");
    let mut o = Overlay::create(&debian, &root).unwrap();
    // Metadata for version-less plugin declarations.
    let meta = fs::read_to_string(
        root.join("org/apache/felix/maven-bundle-plugin/maven-metadata-local.xml"),
    )
    .unwrap();
    assert!(meta.contains("<release>3.5.1</release>"), "{meta}");
    let parent_meta =
        fs::read_to_string(root.join("org/apache/commons/commons-parent/maven-metadata-local.xml"))
            .unwrap();
    assert!(
        parent_meta.contains("<release>56</release>"),
        "{parent_meta}"
    );
    // The parent a project asks for, at a version Debian does not have.
    let asked = Coord::parse("org.apache.commons:commons-parent:pom:52").unwrap();
    assert_eq!(o.map(&asked).unwrap(), "56");
    let pom =
        fs::read_to_string(root.join("org/apache/commons/commons-parent/52/commons-parent-52.pom"))
            .unwrap();
    // Its own version is the asked one; its parent's and dependencies' are Debian's.
    assert!(
        pom.contains("<artifactId>commons-parent</artifactId><version>52</version>"),
        "{pom}"
    );
    assert!(pom.contains("<version>29</version></parent>"), "{pom}");
    assert!(pom.contains("<dependency><version>9</version>"), "{pom}");
    assert_eq!(o.mapped.get(&asked).map(String::as_str), Some("56"));
    // A version Debian has is left alone; jars are linked to Debian's files.
    let junit = Coord::parse("junit:junit:4.13.2").unwrap();
    assert_eq!(o.map(&junit).unwrap(), "4.13.2");
    assert!(!o.mapped.contains_key(&junit));
    let j = Coord::parse("junit:junit:jar:4.12").unwrap();
    assert_eq!(o.map(&j).unwrap(), "4.13.2");
    let link = root.join("junit/junit/4.12/junit-4.12.jar");
    assert_eq!(
        fs::canonicalize(&link).unwrap(),
        fs::canonicalize(debian.join("junit/junit/4.13.2/junit-4.13.2.jar")).unwrap()
    );
    // Nothing was added to Debian's repository.
    assert!(!debian.join("org/apache/commons/commons-parent/52").exists());
    assert!(!debian.join("junit/junit/maven-metadata-local.xml").exists());
    // An artifact Debian does not package is an error naming it.
    let e = o
        .map(&Coord::parse("com.example:nothing:1.0").unwrap())
        .unwrap_err();
    assert!(e.to_string().contains("com.example:nothing"), "{e}");
}

#[test]
fn a_stubbed_plugin_has_a_pom_an_empty_descriptor_and_metadata() {
    let tmp = tempfile::tempdir().unwrap();
    let debian = tmp.path().join("debian");
    debian_repo(&debian);
    let mut o = Overlay::create(&debian, &tmp.path().join("overlay")).unwrap();
    o.stub_plugin("com.github.siom79.japicmp", "japicmp-maven-plugin")
        .unwrap();
    let dir = o
        .root
        .join("com/github/siom79/japicmp/japicmp-maven-plugin");
    let meta = fs::read_to_string(dir.join("maven-metadata-local.xml")).unwrap();
    assert!(
        meta.contains(&format!("<release>{DROPPED}</release>")),
        "{meta}"
    );
    let jar = fs::File::open(
        dir.join(DROPPED)
            .join(format!("japicmp-maven-plugin-{DROPPED}.jar")),
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
    assert!(text.contains("<artifactId>japicmp-maven-plugin</artifactId>"));
}

#[test]
fn maven_s_messages_name_what_is_missing() {
    let out = "\
[FATAL] Non-resolvable parent POM for commons-cli:commons-cli:1.5.0: Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact org.apache.commons:commons-parent:pom:52 has not been downloaded from it before. and 'parent.relativePath' points at wrong local POM @ line 19, column 11
[ERROR] Error resolving version for plugin 'com.github.siom79.japicmp:japicmp-maven-plugin' from the repositories [local (/tmp/j/overlay), central (https://repo.maven.apache.org/maven2)]: Plugin not found in any plugin repository -> [Help 1]
[ERROR] Failed to execute goal on project x: Could not resolve dependencies for project a:b:jar:1: Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact org.mockito:mockito-core:jar:4.11.0 has not been downloaded from it before. -> [Help 1]
[FATAL] Non-resolvable parent POM for commons-cli:commons-cli:1.5.0: Cannot access central (https://repo.maven.apache.org/maven2) in offline mode and the artifact org.apache.commons:commons-parent:pom:52 has not been downloaded from it before.
";
    assert_eq!(
        missing_in(out),
        vec![
            Missing::Parent(Coord::parse("org.apache.commons:commons-parent:52").unwrap()),
            Missing::PluginVersion {
                group: "com.github.siom79.japicmp".into(),
                artifact: "japicmp-maven-plugin".into()
            },
            Missing::Artifact(Coord::parse("org.mockito:mockito-core:4.11.0").unwrap()),
        ]
    );
    assert!(missing_in("[INFO] BUILD SUCCESS").is_empty());
}

/// A project that names a dependency without a version its upstream parent managed: the
/// mapped parent manages Debian's version.
#[test]
fn the_mapped_parent_manages_what_the_project_names_without_a_version() {
    let tmp = tempfile::tempdir().unwrap();
    let debian = tmp.path().join("debian");
    debian_repo(&debian);
    let mut o = Overlay::create(&debian, &tmp.path().join("overlay")).unwrap();
    let msg = "[ERROR] 'dependencies.dependency.version' for junit:junit:jar is missing. @ line 94, column 17";
    assert_eq!(
        missing_in(msg),
        vec![Missing::Unmanaged {
            group: "junit".into(),
            artifact: "junit".into()
        }]
    );
    // No parent mapped yet: nothing to add it to.
    assert!(o.manage("junit", "junit").is_err());
    o.map_parent(&Coord::parse("org.apache.commons:commons-parent:pom:54").unwrap())
        .unwrap();
    assert_eq!(o.manage("junit", "junit").unwrap(), "4.13.2");
    o.manage("org.apache.felix", "maven-bundle-plugin").unwrap();
    let pom = fs::read_to_string(
        o.root
            .join("org/apache/commons/commons-parent/54/commons-parent-54.pom"),
    )
    .unwrap();
    let managed = pom.split("<dependencyManagement>").nth(1).expect("managed");
    assert!(
        managed.contains("<artifactId>junit</artifactId><version>4.13.2</version>"),
        "{pom}"
    );
    assert!(
        managed.contains("<artifactId>maven-bundle-plugin</artifactId><version>3.5.1</version>"),
        "{pom}"
    );
    assert_eq!(pom.matches("<dependencyManagement>").count(), 1, "{pom}");
    // Debian's own POM is untouched.
    let debian_pom = fs::read_to_string(
        debian.join("org/apache/commons/commons-parent/56/commons-parent-56.pom"),
    )
    .unwrap();
    assert!(!debian_pom.contains("dependencyManagement"));
}

/// The loop supplies what each failed build names, once, and stops when a build names
/// nothing it can supply.
#[test]
fn resolve_supplies_what_each_build_names() {
    let tmp = tempfile::tempdir().unwrap();
    let debian = tmp.path().join("debian");
    debian_repo(&debian);
    let mut o = Overlay::create(&debian, &tmp.path().join("overlay")).unwrap();
    let root = o.root.clone();
    let parent = "[FATAL] Non-resolvable parent POM for a:b:1: Cannot access central in offline mode and the artifact org.apache.commons:commons-parent:pom:52 has not been downloaded from it before.";
    let plugin = "[ERROR] Error resolving version for plugin 'org.apache.rat:apache-rat-plugin' from the repositories [local (x)]: Plugin not found in any plugin repository";
    let builds = std::cell::Cell::new(0);
    let got = resolve(&mut o, 10, || {
        builds.set(builds.get() + 1);
        let has_parent = root.join("org/apache/commons/commons-parent/52").exists();
        let has_rat = root
            .join("org/apache/rat/apache-rat-plugin")
            .join(DROPPED)
            .exists();
        match (has_parent, has_rat) {
            (false, _) => (false, parent.to_string()),
            (true, false) => (false, plugin.to_string()),
            (true, true) => (true, "[INFO] BUILD SUCCESS".to_string()),
        }
    })
    .unwrap();
    assert_eq!(got, Resolution::Built { rounds: 3 });
    assert_eq!(o.mapped.len(), 2);
    // A failure that names nothing to supply, or the same thing again, stops the loop.
    let got = resolve(&mut o, 10, || {
        (false, "[ERROR] COMPILATION ERROR".to_string())
    })
    .unwrap();
    assert!(
        matches!(got, Resolution::Stuck { rounds: 1, ref errors } if errors.contains("COMPILATION"))
    );
    let got = resolve(&mut o, 10, || (false, parent.to_string())).unwrap();
    assert!(
        matches!(got, Resolution::Stuck { rounds: 1, .. }),
        "{got:?}"
    );
}

#[test]
fn versions_compare_by_their_numbers() {
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        release(&v(&["2.9", "2.22.3", "debian"])).as_deref(),
        Some("2.22.3")
    );
    assert_eq!(release(&v(&["debian"])).as_deref(), Some("debian"));
    assert_eq!(release(&v(&[])), None);
}
