//! Tests of `java_maven`.

use super::*;
use crate::sandbox::image::{render_repo_dockerfile, repo_labels, repo_tag};

/// Every `mvn` of a task image loads the overlay's core extension (which leaves out the
/// plugins Debian lacks): the repository image builds it into Maven's extension folder and
/// the task layer carries that folder (jsoup's grading command failed on its failsafe
/// stand-in in task images without it).
#[test]
fn task_images_carry_the_maven_extension_the_repository_image_builds() {
    let repo = Repo::sample("javashelf", Language::Java, "maven", "junit");
    let recipe = image_recipe(&repo);
    // The Dockerfile runs this script (`renders_the_java_template`).
    let script = recipe
        .files
        .iter()
        .find(|f| f.path == "java/build-extension.sh")
        .expect("the extension's build script");
    let script = String::from_utf8_lossy(&script.bytes);
    assert!(
        script.contains(&format!(
            "jar cf {MAVEN_EXT_DIR}/{}",
            maven_overlay::EXTENSION_JAR
        )),
        "{script}"
    );
    let layer = JavaMaven.task_layer();
    assert!(
        layer.copy_paths.contains(&MAVEN_EXT_DIR.to_string()),
        "{layer:?}"
    );
    assert!(layer.copy_paths.contains(&"/opt/swe-forge".to_string()));
}

#[test]
fn renders_the_java_template() {
    let repo = Repo::sample("javashelf", Language::Java, "maven", "junit");
    let recipe = image_recipe(&repo);
    let labels = repo_labels(&repo, &recipe, &recipe.variants[0], "sha256:b");
    assert_eq!(labels["swe-forge.build-system"], "maven");
    let text = render_repo_dockerfile(
        &recipe,
        &recipe.variants[0],
        "swe-forge/java-base:x",
        false,
        &labels,
    )
    .unwrap();
    assert!(text.starts_with("FROM swe-forge/java-base:x\n"), "{text}");
    assert!(
        text.contains("H=/opt/swe-forge/java; J=/usr/share/java;"),
        "{text}"
    );
    assert!(
        text.contains("jar xf $J/org.jacoco.agent.jar jacocoagent.jar"),
        "{text}"
    );
    assert!(
        text.contains("org.junit.platform.launcher.TestExecutionListener"),
        "{text}"
    );
    assert!(
        text.contains("install -m 0644 $S/maven-settings.xml /opt/swe-forge/maven-settings.xml"),
        "{text}"
    );
    assert!(
        text.contains("COPY --chown=1000:1000 testbed/ /testbed/"),
        "{text}"
    );
    assert!(text.contains("USER tester\n"), "{text}");
    assert!(
        text.contains("mvn -o -q -B -s /opt/swe-forge/maven-settings.xml test-compile"),
        "{text}"
    );
    assert!(
        text.contains("export JAVA_TOOL_OPTIONS='-Xmx768m"),
        "{text}"
    );
    assert!(
        text.contains("swe-forge: javashelf does not build offline"),
        "{text}"
    );
    assert!(text.contains("git clean -q -f -d -x"), "{text}");
    assert!(
        text.contains("install -d -o 1000 -g 1000 /var/cache/swe-forge/maven-build"),
        "{text}"
    );
    assert!(
        text.contains("bash /opt/swe-forge/java/warmup-setup.sh"),
        "{text}"
    );
    assert!(
        text.contains("head -n 1 /tmp/swe-forge-warmup/fast-setup.txt"),
        "{text}"
    );
    let warmup = java_warmup_script();
    assert!(
        warmup.contains("C=/var/cache/swe-forge/maven-build\n"),
        "{warmup}"
    );
    assert!(
        warmup.contains("-s /opt/swe-forge/maven-settings.xml"),
        "{warmup}"
    );
    assert!(
        text.contains("LABEL swe-forge.base=\"sha256:b\" swe-forge.build-system=\"maven\""),
        "{text}"
    );
    assert!(text.contains("swe-forge.language=\"java\""), "{text}");
    let instructions = text
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
        .count();
    assert!(instructions <= 11, "{instructions} instructions:\n{text}");
    // The overlay: made as root from a copy of the repository, into the root-owned
    // folder the settings name, with the script, its aliases and the core extension.
    assert!(
        text.contains("install -m 0644 $S/maven-overlay.py $S/maven-aliases.txt $H/"),
        "{text}"
    );
    assert!(text.contains("bash $S/build-extension.sh"), "{text}");
    assert!(
        text.contains(
            "maven-overlay.py --root /opt/swe-forge/m2 --project /tmp/swe-forge-overlay-src"
        ),
        "{text}"
    );
    let overlay_at = text.find("maven-overlay.py --root").unwrap();
    let user_at = text.find("USER tester").unwrap();
    assert!(overlay_at < user_at, "the overlay is made as root:\n{text}");
    let settings = recipe
        .files
        .iter()
        .find(|f| f.path == "java/maven-settings.xml")
        .map(|f| String::from_utf8_lossy(&f.bytes).to_string())
        .unwrap();
    assert!(
        settings.contains("<localRepository>/opt/swe-forge/m2</localRepository>"),
        "{settings}"
    );
}

#[test]
fn the_harnesses_run_the_grading_command_and_read_the_surefire_reports() {
    let g = JavaMaven.grading(
        Path::new("/nonexistent"),
        "mvn -o -B test",
        vec!["src/test/java/a/BTest.java".into()],
    );
    assert!(JavaMaven.grades_tests_by_name());
    let g = g.with_tests(vec!["a.BTest#x".into(), "a.BTest#y".into()]);
    assert_eq!(
        g.command,
        "mvn -o -B -s /opt/swe-forge/maven-settings.xml -Dsurefire.failIfNoSpecifiedTests=false \
         -DfailIfNoTests=false '-Dtest=a.BTest#x*+y*' test"
    );
    let graded = vec!["a.BTest#x".to_string(), "a.BTest#y".to_string()];
    let sb = JavaMaven
        .harness_run(crate::toolchain::Harness::SweBench, &g, &graded, "/tmp/e")
        .unwrap();
    assert_eq!(sb.log_parser, "parse_log_maven");
    assert!(sb.setup.contains("/tmp/e/verdict.py"), "{}", sb.setup);
    assert!(sb.setup.contains("def test_id"), "{}", sb.setup);
    assert!(sb.command.contains(&g.command), "{}", sb.command);
    assert!(
        sb.command
            .contains("python3 /tmp/e/verdict.py --swebench 'a.BTest#x' 'a.BTest#y'"),
        "{}",
        sb.command
    );
    // The command's status is the verdict's (a failing test that is not graded must not
    // fail it: SWE-bench then calls the log inconsistent).
    assert!(
        sb.command
            .contains("--swebench 'a.BTest#x' 'a.BTest#y'; status=$?;")
            && sb.command.ends_with("(exit $status)")
            && !sb.command.contains("2>&1; status=$?"),
        "{}",
        sb.command
    );
    // Maven's own words are defused before the verdict's lines.
    assert!(
        sb.command.contains("s/-Dtest=/-Dtest =/g"),
        "{}",
        sb.command
    );
    let hb = JavaMaven
        .harness_run(crate::toolchain::Harness::Harbor, &g, &graded, "/logs/v")
        .unwrap();
    assert!(
        hb.command
            .ends_with("python3 /logs/v/verdict.py --harbor 'a.BTest#x' 'a.BTest#y'"),
        "{}",
        hb.command
    );
    assert!(JavaMaven.harness_readable("a.B$Inner#x"));
    assert!(!JavaMaven.harness_readable("a.B#x y"));
}

#[test]
fn the_overlay_s_mapping_is_recorded_as_lists_and_its_dropped_modules_are_left_out() {
    let m = Mapping::parse(
        r#"{"result": "built", "rounds": 5,
            "mapped": {"org.apache.commons:commons-parent:52": "56"},
            "managed": {"org.hamcrest:hamcrest": "2.2"},
            "relocated": {"jakarta.xml.bind:jakarta.xml.bind-api:2.3.3": "javax.xml.bind:jaxb-api:2.3.1"},
            "dropped_plugins": ["com.github.siom79.japicmp:japicmp-maven-plugin"],
            "dropped_modules": {"args4j-tools": "args4j-tools", "x": ""}}"#,
    )
    .unwrap();
    let note = mapping_note(&m);
    let o = &note["maven_overlay"];
    assert_eq!(
        o["mapped"][0]["asked"],
        "org.apache.commons:commons-parent:52"
    );
    assert_eq!(o["mapped"][0]["debian"], "56");
    assert_eq!(o["managed"][0]["artifact"], "org.hamcrest:hamcrest");
    assert_eq!(o["relocated"][0]["debian"], "javax.xml.bind:jaxb-api:2.3.1");
    assert_eq!(
        o["dropped_plugins"][0],
        "com.github.siom79.japicmp:japicmp-maven-plugin"
    );
    assert_eq!(o["dropped_modules"][0]["folder"], "args4j-tools");
    // The root folder is never a left-out module.
    assert_eq!(
        JavaMaven.left_out_folders(&note),
        vec!["args4j-tools".to_string()]
    );
    assert!(JavaMaven
        .left_out_folders(&serde_json::json!({}))
        .is_empty());
}

#[test]
fn java_repo_tag_depends_on_what_the_image_holds() {
    let a = Repo::sample("javashelf", Language::Java, "maven", "junit");
    let t = repo_tag(&a, &image_recipe(&a), "sha256:1");
    assert!(t.starts_with("swe-forge/javashelf:"), "{t}");
    assert_eq!(t, repo_tag(&a, &image_recipe(&a), "sha256:1"));
    assert_ne!(t, repo_tag(&a, &image_recipe(&a), "sha256:2"));
    let mut b = a.clone();
    b.commit = "b".repeat(40);
    assert_ne!(t, repo_tag(&b, &image_recipe(&b), "sha256:1"));
    let py = crate::toolchain::python_pytest::image_recipe(&a);
    assert_ne!(t, repo_tag(&a, &py, "sha256:1"));
}

#[test]
fn the_base_image_installs_the_jdk_after_debootstrap() {
    assert_eq!(BASE.version_label, "java");
    assert!(BASE.later_packages.contains(&"openjdk-17-jdk-headless"));
    assert!(BASE.later_packages.contains(&"libjacoco-java"));
    // ca-certificates-java needs a JVM: the JDK is installed with apt afterwards.
    assert!(!BASE
        .packages
        .iter()
        .any(|p| p.contains("jdk") || *p == "maven"));
    for p in ["python3", "git", "ca-certificates", "coreutils"] {
        assert!(BASE.all_packages().contains(&p), "{p}");
    }
}

#[test]
fn screening_without_coverage_takes_the_package_s_tests() {
    let stable: BTreeSet<String> = ["a.b.CTest#x", "a.b.DTest#y", "a.c.ETest#z"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        JavaMaven
            .screening_fallback("src/main/java/a/b/C.java", &stable)
            .unwrap(),
        vec!["a.b.CTest#x".to_string(), "a.b.DTest#y".to_string()]
    );
    assert_eq!(
        JavaMaven.screening_fallback("src/main/java/z/Q.java", &stable),
        None
    );
    assert_eq!(JavaMaven.screening_fallback("lib/q.py", &stable), None);
}
