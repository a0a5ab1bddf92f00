//! Records what `sitesim --version` names besides the crate's version: the commit the binary
//! was built from (`git rev-parse --short HEAD`, "unknown" outside a git checkout) and a hash of
//! the embedded default models (models/combined, kept in the config crate that embeds them:
//! crates/config/models, so two binaries with different models can be told apart even from one
//! commit; "unknown" where they are not beside this crate, as in a package from crates.io).

use std::path::Path;
use std::process::Command;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(&root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=SITESIM_COMMIT={commit}");
    let head = root.join(".git/HEAD");
    if head.exists() {
        println!("cargo:rerun-if-changed={}", head.display());
        println!(
            "cargo:rerun-if-changed={}",
            root.join(".git/refs/heads").display()
        );
    }
    // FNV-1a over the model files' names and bytes, in name order: enough to tell models apart.
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/models/combined");
    if !models.is_dir() {
        println!("cargo:rustc-env=SITESIM_MODELS=unknown");
        return;
    }
    println!("cargo:rerun-if-changed={}", models.display());
    let mut names: Vec<_> = std::fs::read_dir(&models)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    names.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for path in &names {
        if let (Some(name), Ok(bytes)) = (path.file_name(), std::fs::read(path)) {
            feed(name.to_string_lossy().as_bytes());
            feed(&bytes);
        }
    }
    println!("cargo:rustc-env=SITESIM_MODELS={hash:016x}");
}
