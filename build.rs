//! Builds the browser UI into the binary: installs the npm packages pinned by
//! `package-lock.json` (`npm ci`, only when the lock file is newer than the installed tree),
//! bundles `static/` with esbuild (`static/build.mjs`) into `OUT_DIR/ui`, and writes
//! `OUT_DIR/ui_assets.rs`, the table `http::ui` serves from. Nothing built is committed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

const NODE_HELP: &str = "Colloquy's browser UI is built with Node.js (20 or newer) and npm. \
Install them (Debian/Ubuntu: `apt install nodejs npm`; others: https://nodejs.org/), then build \
again. To build the server without its UI, set COLLOQUY_SKIP_UI=1.";

fn main() {
    for path in ["static", "package.json", "package-lock.json"] {
        println!("cargo:rerun-if-changed={path}");
    }
    println!("cargo:rerun-if-env-changed=COLLOQUY_SKIP_UI");
    let root =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let ui = out.join("ui");
    if env::var_os("COLLOQUY_SKIP_UI").is_some() {
        let _ = fs::remove_dir_all(&ui);
        fs::create_dir_all(&ui).expect("create the UI directory");
        fs::write(
            ui.join("index.html"),
            "<!doctype html><title>Colloquy</title><p>This build has no browser UI \
             (it was built with COLLOQUY_SKIP_UI).</p>",
        )
        .expect("write the placeholder page");
    } else {
        check_tool("node");
        check_tool("npm");
        install_packages(&root);
        run(Command::new("node")
            .arg(root.join("static/build.mjs"))
            .arg(&ui)
            .current_dir(&root));
    }
    write_table(&ui, &out.join("ui_assets.rs"));
}

fn check_tool(name: &str) {
    let found = Command::new(name)
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !found {
        panic!("`{name}` was not found. {NODE_HELP}");
    }
}

/// `npm ci` unless `node_modules` was installed from the current lock file.
fn install_packages(root: &Path) {
    let modified = |path: &Path| fs::metadata(path).and_then(|m| m.modified()).ok();
    let lock = modified(&root.join("package-lock.json"));
    let installed = modified(&root.join("node_modules/.package-lock.json"));
    if lock.is_some() && installed.is_some() && installed >= lock {
        return;
    }
    run(Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(root));
}

fn run(command: &mut Command) {
    let status = command
        .status()
        .unwrap_or_else(|err| panic!("could not run {command:?}: {err}. {NODE_HELP}"));
    if !status.success() {
        panic!("{command:?} failed with {status}");
    }
}

/// Every file under `ui`, with its precompressed siblings (`.br`, `.gz`) when the bundler
/// wrote them, as `include_bytes!` entries.
fn write_table(ui: &Path, table: &Path) {
    let mut files = Vec::new();
    collect(ui, &mut files);
    files.sort();
    let mut source = String::from("pub static ASSETS: &[Asset] = &[\n");
    for file in &files {
        let name = file.to_string_lossy();
        if name.ends_with(".gz") || name.ends_with(".br") {
            continue;
        }
        let path = file.strip_prefix(ui).expect("under the UI directory");
        let url = format!("/{}", path.to_string_lossy().replace('\\', "/"));
        let sibling = |ext: &str| {
            let candidate = PathBuf::from(format!("{name}.{ext}"));
            if candidate.exists() {
                format!("Some(include_bytes!({:?}))", candidate.to_string_lossy())
            } else {
                "None".to_string()
            }
        };
        writeln!(
            source,
            "    Asset {{ path: {url:?}, body: include_bytes!({name:?}), gzip: {}, brotli: {} }},",
            sibling("gz"),
            sibling("br"),
        )
        .expect("write to a string");
    }
    source.push_str("];\n");
    // A new file, never one written in place: a target directory copied with hard links
    // (`cp -al`) would otherwise share this table with the copy it came from.
    let _ = fs::remove_file(table);
    fs::write(table, source).expect("write the asset table");
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read the UI directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}
