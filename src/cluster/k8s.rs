//! Kubernetes: a sharded run as three manifests — a PersistentVolumeClaim (the run's
//! directory and the cache), an Indexed Job whose pod with completion index K runs shard K, and
//! a merge Job whose init container waits for every shard's `summary.json` (`swe-forge status
//! --wait`: a Job cannot depend on another natively) before its container merges them. The
//! manifests are built as values and written with serde_yaml; only the comments heading each
//! file are text.

use super::{io, sh_quote, write_file, ClusterError, Plan};
use serde::Serialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Where the node's Docker socket is, for `docker_socket`.
pub const DOCKER_SOCKET: &str = "/var/run/docker.sock";

/// The Kubernetes side: names, image, storage and pod resources.
#[derive(Clone, Debug)]
pub struct K8sOptions {
    /// Prefix of the objects' names (NAME-data, NAME-shards, NAME-merge).
    pub name: String,
    pub namespace: String,
    /// The image the pods run: swe-forge on PATH (or at the plan's `swe_forge`), with what the
    /// chosen sandbox needs (git and Python for `--sandbox local`; a Docker client otherwise).
    pub image: String,
    /// Shard pods at once (at most the shard count).
    pub parallelism: usize,
    /// Failed pods the shards' Job tolerates before it fails (all indexes together).
    pub backoff_limit: u32,
    /// The volume's storage class (the cluster's default when `None`); it must offer
    /// ReadWriteMany when shards may land on different nodes.
    pub storage_class: Option<String>,
    /// The volume's size (`50Gi`).
    pub storage: String,
    pub access_mode: String,
    /// Where the volume is mounted in the pods; the plan's paths lie under it.
    pub mount: String,
    /// CPU request of a shard pod (`2`, `500m`).
    pub cpu: Option<String>,
    /// Memory request and limit of a shard pod (`8Gi`).
    pub memory: Option<String>,
    /// Mount the node's Docker socket into the shard pods (for `--sandbox docker`; root on the
    /// node, see docs/cluster.md).
    pub docker_socket: bool,
    /// Seconds the merge waits for the shards before it fails.
    pub wait_timeout: u64,
    /// Seconds between the merge's looks at the shards.
    pub wait_interval: u64,
}

impl Default for K8sOptions {
    fn default() -> Self {
        K8sOptions {
            name: "swe-forge".into(),
            namespace: "default".into(),
            image: "swe-forge:latest".into(),
            parallelism: 1,
            backoff_limit: 6,
            storage_class: None,
            storage: "50Gi".into(),
            access_mode: "ReadWriteMany".into(),
            mount: "/data".into(),
            cpu: None,
            memory: None,
            docker_socket: false,
            wait_timeout: 7 * 24 * 3600,
            wait_interval: 30,
        }
    }
}

/// The manifests: (file name, its text), in the order to apply them.
#[derive(Clone, Debug)]
pub struct Manifests {
    pub files: Vec<(String, String)>,
}

/// Where [`write`] put them.
#[derive(Clone, Debug, Serialize)]
pub struct Written {
    pub dir: PathBuf,
    pub files: Vec<PathBuf>,
}

fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 50
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Build the manifests of `plan` (its paths as the pods see them: under `opts.mount`).
pub fn render(plan: &Plan, opts: &K8sOptions) -> Result<Manifests, ClusterError> {
    plan.validate()?;
    let n = plan.shards;
    if opts.parallelism == 0 || opts.parallelism > n {
        return Err(ClusterError::Invalid(format!(
            "--parallelism {} must be between 1 and the shard count {n}",
            opts.parallelism
        )));
    }
    for (what, v) in [("--name", &opts.name), ("--namespace", &opts.namespace)] {
        if !is_dns_label(v) {
            return Err(ClusterError::Invalid(format!(
                "{what} `{v}` must be a DNS label: lower-case letters, digits and `-`, at most 50"
            )));
        }
    }
    if opts.wait_interval == 0 {
        return Err(ClusterError::Invalid(
            "the wait interval must be at least 1 second".into(),
        ));
    }
    let name = &opts.name;
    let labels = json!({
        "app.kubernetes.io/name": "swe-forge",
        "app.kubernetes.io/instance": name,
    });
    let meta = |object: &str, component: &str| {
        let mut l = labels.clone();
        l["app.kubernetes.io/component"] = json!(component);
        json!({"name": format!("{name}-{object}"), "namespace": opts.namespace, "labels": l})
    };
    let claim = format!("{name}-data");

    // The volume.
    let mut pvc_spec = json!({
        "accessModes": [opts.access_mode],
        "resources": {"requests": {"storage": opts.storage}},
    });
    if let Some(class) = &opts.storage_class {
        pvc_spec["storageClassName"] = json!(class);
    }
    let pvc = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta("data", "storage"),
        "spec": pvc_spec,
    });

    let mut volumes = vec![json!({"name": "data", "persistentVolumeClaim": {"claimName": claim}})];
    let mut mounts = vec![json!({"name": "data", "mountPath": opts.mount})];
    if opts.docker_socket {
        volumes.push(json!({
            "name": "docker-socket",
            "hostPath": {"path": DOCKER_SOCKET, "type": "Socket"},
        }));
        mounts.push(json!({"name": "docker-socket", "mountPath": DOCKER_SOCKET}));
    }

    // The shards: pod K (JOB_COMPLETION_INDEX, set by the Job controller) runs shard K. A
    // summary.json left by an earlier attempt is removed first, so the merge waits for this one.
    let shard_script = format!(
        "set -eu\nrm -f {}\"$JOB_COMPLETION_INDEX\"/summary.json\n{}",
        sh_quote(&plan.shard_out("")),
        plan.shard_lines("JOB_COMPLETION_INDEX", None)
    );
    let mut shard_container = json!({
        "name": "shard",
        "image": opts.image,
        "command": ["/bin/sh", "-c", shard_script],
        "volumeMounts": mounts,
    });
    let mut requests = serde_json::Map::new();
    let mut limits = serde_json::Map::new();
    if let Some(cpu) = &opts.cpu {
        requests.insert("cpu".into(), json!(cpu));
    }
    if let Some(mem) = &opts.memory {
        requests.insert("memory".into(), json!(mem));
        limits.insert("memory".into(), json!(mem));
    }
    if !requests.is_empty() {
        let mut r = json!({"requests": requests});
        if !limits.is_empty() {
            r["limits"] = json!(limits);
        }
        shard_container["resources"] = r;
    }
    let shards = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta("shards", "shards"),
        "spec": {
            "completionMode": "Indexed",
            "completions": n,
            "parallelism": opts.parallelism,
            "backoffLimit": opts.backoff_limit,
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "swe-forge", "app.kubernetes.io/instance": name, "app.kubernetes.io/component": "shards"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [shard_container],
                    "volumes": volumes,
                },
            },
        },
    });

    // The merge: wait for every shard's summary.json, then merge.
    let exe = sh_quote(&plan.swe_forge);
    let global = plan
        .cache
        .as_ref()
        .map(|c| format!(" --cache {}", sh_quote(c)))
        .unwrap_or_default();
    let wait_script = format!(
        "set -eu\nswe_forge={exe}\n{}exec \"$swe_forge\"{global} status --wait --timeout {} --interval {} \"$@\"\n",
        plan.shard_list_lines(),
        opts.wait_timeout,
        opts.wait_interval
    );
    let merge_script = format!("set -eu\nswe_forge={exe}\n{}", plan.merge_lines());
    let data_mount = json!([{"name": "data", "mountPath": opts.mount}]);
    let merge = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta("merge", "merge"),
        "spec": {
            "backoffLimit": 2,
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "swe-forge", "app.kubernetes.io/instance": name, "app.kubernetes.io/component": "merge"}},
                "spec": {
                    "restartPolicy": "Never",
                    "initContainers": [{
                        "name": "wait-for-shards",
                        "image": opts.image,
                        "command": ["/bin/sh", "-c", wait_script],
                        "volumeMounts": data_mount,
                    }],
                    "containers": [{
                        "name": "merge",
                        "image": opts.image,
                        "command": ["/bin/sh", "-c", merge_script],
                        "volumeMounts": data_mount,
                    }],
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
                },
            },
        },
    });

    let head = |what: &str| {
        format!(
            "# swe-forge cluster k8s: {what}\n# Apply the directory in order: kubectl apply -f \
             <this directory>/ (00-pvc, 10-shards, 20-merge).\n"
        )
    };
    let socket_note = if opts.docker_socket {
        format!(
            "# WARNING: the shard pods mount the node's Docker socket ({DOCKER_SOCKET}): whoever \
             runs in them is root on the node, and the containers they start escape the pod's \
             limits. See docs/cluster.md.\n"
        )
    } else {
        String::new()
    };
    let files = vec![
        (
            "00-pvc.yaml".to_string(),
            format!(
                "{}# One volume for the run's directory ({}) and the cache ({}). ReadWriteMany: \
                 shards on different nodes write it at once.\n{}",
                head("the volume every pod shares."),
                plan.out,
                plan.cache.as_deref().unwrap_or("none"),
                serde_yaml::to_string(&pvc)?
            ),
        ),
        (
            "10-shards.yaml".to_string(),
            format!(
                "{}# An Indexed Job: the pod with completion index K (env JOB_COMPLETION_INDEX) \
                 runs `swe-forge run --shard K/{n}` into {}. A failed pod is retried into the \
                 same directory (it resumes).\n{socket_note}{}",
                head(&format!("{n} shard(s), {} at once.", opts.parallelism)),
                plan.shard_out("K"),
                serde_yaml::to_string(&shards)?
            ),
        ),
        (
            "20-merge.yaml".to_string(),
            format!(
                "{}# A Job cannot depend on another: this one's init container polls for the {n} \
                 shards' summary.json (`swe-forge status --wait`, every {}s, at most {}s), then \
                 its container merges them into {}.\n{}",
                head("the merge, after every shard."),
                opts.wait_interval,
                opts.wait_timeout,
                plan.merged_out(),
                serde_yaml::to_string(&merge)?
            ),
        ),
    ];
    Ok(Manifests { files })
}

/// Write the manifests into `dir`.
pub fn write(plan: &Plan, opts: &K8sOptions, dir: &Path) -> Result<Written, ClusterError> {
    let m = render(plan, opts)?;
    std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    let files = m
        .files
        .iter()
        .map(|(name, text)| write_file(&dir.join(name), text, false))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Written {
        dir: dir.to_path_buf(),
        files,
    })
}

/// The documents of a manifest file, parsed (for checks).
pub fn parse(text: &str) -> Result<Vec<Value>, ClusterError> {
    use serde::Deserialize;
    serde_yaml::Deserializer::from_str(text)
        .map(|d| Value::deserialize(d).map_err(ClusterError::from))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::tests::plan;

    fn k8s_plan() -> Plan {
        Plan {
            swe_forge: "swe-forge".into(),
            out: "/data/swe-forge".into(),
            cache: Some("/data/cache".into()),
            ..plan()
        }
    }

    fn docs(m: &Manifests) -> Vec<Value> {
        m.files
            .iter()
            .flat_map(|(_, t)| parse(t).unwrap())
            .collect()
    }

    #[test]
    fn an_indexed_job_a_merge_job_and_a_claim() {
        let opts = K8sOptions {
            parallelism: 2,
            ..Default::default()
        };
        let m = render(&k8s_plan(), &opts).unwrap();
        let d = docs(&m);
        let kinds: Vec<&str> = d.iter().map(|x| x["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["PersistentVolumeClaim", "Job", "Job"]);
        let shards = &d[1]["spec"];
        assert_eq!(shards["completionMode"], "Indexed");
        assert_eq!(shards["completions"], 3);
        assert_eq!(shards["parallelism"], 2);
        let c = &shards["template"]["spec"]["containers"][0];
        let script = c["command"][2].as_str().unwrap();
        assert!(script.contains("k=\"$JOB_COMPLETION_INDEX\""), "{script}");
        assert!(script.contains(
            "\"$swe_forge\" --cache /data/cache run /data/seeds.yaml --shard \"$k/3\" --out /data/swe-forge/shard-\"$k\" --sandbox local --seed 3 || status=$?"
        ), "{script}");
        assert_eq!(shards["template"]["spec"]["restartPolicy"], "Never");
        assert_eq!(
            shards["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"],
            "swe-forge-data"
        );
        assert!(c.get("resources").is_none());
        // The merge waits, then merges.
        let pod = &d[2]["spec"]["template"]["spec"];
        let wait = pod["initContainers"][0]["command"][2].as_str().unwrap();
        assert!(wait.contains("status --wait"), "{wait}");
        let merge = pod["containers"][0]["command"][2].as_str().unwrap();
        assert!(
            merge.contains("merge \"$@\" --out /data/swe-forge/merged"),
            "{merge}"
        );
        assert!(!m.files[2].1.contains("docker.sock"));
        assert!(m.files[2].1.starts_with("# swe-forge cluster k8s"));
        // No storage class unless given.
        assert!(d[0]["spec"].get("storageClassName").is_none());
    }

    #[test]
    fn options_reach_the_manifests() {
        let opts = K8sOptions {
            parallelism: 3,
            storage_class: Some("nfs".into()),
            storage: "10Gi".into(),
            namespace: "ml".into(),
            image: "registry.example/swe-forge:1".into(),
            cpu: Some("2".into()),
            memory: Some("8Gi".into()),
            docker_socket: true,
            ..Default::default()
        };
        let m = render(&k8s_plan(), &opts).unwrap();
        let d = docs(&m);
        assert_eq!(d[0]["spec"]["storageClassName"], "nfs");
        assert_eq!(d[0]["spec"]["resources"]["requests"]["storage"], "10Gi");
        assert!(d.iter().all(|x| x["metadata"]["namespace"] == "ml"));
        let pod = &d[1]["spec"]["template"]["spec"];
        assert_eq!(
            pod["containers"][0]["image"],
            "registry.example/swe-forge:1"
        );
        assert_eq!(pod["containers"][0]["resources"]["requests"]["cpu"], "2");
        assert_eq!(pod["containers"][0]["resources"]["limits"]["memory"], "8Gi");
        assert_eq!(pod["volumes"][1]["hostPath"]["path"], DOCKER_SOCKET);
        assert!(m.files[1].1.contains("WARNING"));
    }

    #[test]
    fn bad_options_are_refused() {
        for opts in [
            K8sOptions {
                parallelism: 4,
                ..Default::default()
            },
            K8sOptions {
                parallelism: 0,
                ..Default::default()
            },
            K8sOptions {
                name: "Bad_Name".into(),
                ..Default::default()
            },
        ] {
            assert!(matches!(
                render(&k8s_plan(), &opts),
                Err(ClusterError::Invalid(_))
            ));
        }
    }

    #[test]
    fn the_pod_scripts_are_valid_shell() {
        let m = render(&k8s_plan(), &K8sOptions::default()).unwrap();
        for doc in docs(&m).iter().skip(1) {
            let pod = &doc["spec"]["template"]["spec"];
            let cs = pod["containers"]
                .as_array()
                .unwrap()
                .iter()
                .chain(pod["initContainers"].as_array().into_iter().flatten());
            for c in cs {
                let script = c["command"][2].as_str().unwrap();
                let o = std::process::Command::new("sh")
                    .args(["-n", "-c", script])
                    .output()
                    .unwrap();
                assert!(o.status.success(), "{script}: {o:?}");
            }
        }
    }
}
