//! Rebuild when the embedded data changes: include_dir does not tell cargo which files it read.
fn main() {
    for dir in ["mutators", "seeds", "templates", "dockerfiles"] {
        println!("cargo:rerun-if-changed={dir}");
    }
}
