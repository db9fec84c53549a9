//! Release builds of the daemon also link its hot code first: the functions it runs to
//! start, serve a turn and spawn a sub-agent (named in the linker script `link/hot-code.ld`)
//! are placed side by side in a section of their own before `.text`, so the pages the daemon
//! touches hold little else and its resident memory is what it uses. Why and how the script
//! is made: docs/performance.md, "Hot code first".
//!
//! And they are stripped at their link (symbols and line tables), so the binary as built is
//! the one shipped; `SWITCHBOARD_STRIP=0` keeps them, for profiling and for
//! `deploy/package.sh`, which splits them into `switchboard.debug` beside the binary. A link
//! argument and not the profile's `strip`: the profile's settings go into every symbol's
//! hash, and the build with symbols would not be the same code (docs/performance.md, "Size").

use std::path::Path;
use std::process::Command;

/// The linker script that gathers the hot functions (made by `bench/hot-code.sh`).
const HOT_CODE: &str = "link/hot-code.ld";
/// Set to `0` to link without it (e.g. with a linker other than lld).
const OPT_OUT: &str = "SWITCHBOARD_LINK_ORDER";
/// Set to `0` to keep the symbols and line tables of a release build.
const STRIP: &str = "SWITCHBOARD_STRIP";

fn main() {
    let lld = hot_code_first();
    strip_release();
    if lld {
        pack_relative_relocations();
    }
}

/// Release builds linked by lld keep their relative relocations packed (`DT_RELR`): the
/// loader applies the same 55,000 of them at start, read from ~10 KB instead of a 1.3 MB
/// table whose pages then stay resident (docs/performance.md, "Size"). Needs glibc 2.36 or
/// later where the daemon runs (Debian 12, Ubuntu 22.10).
fn pack_relative_relocations() {
    println!("cargo:rustc-link-arg-bin=switchboard=-Wl,-z,pack-relative-relocs");
}

/// Release builds on Linux drop their symbols and debug info at the link (`--strip-all`).
fn strip_release() {
    println!("cargo:rerun-if-env-changed={STRIP}");
    let env = |key: &str| std::env::var(key).unwrap_or_default();
    if env("PROFILE") == "release" && env("CARGO_CFG_TARGET_OS") == "linux" && env(STRIP) != "0" {
        println!("cargo:rustc-link-arg-bin=switchboard=-Wl,--strip-all");
    }
}

/// Links the hot code first; whether this is a release build linked by lld.
fn hot_code_first() -> bool {
    println!("cargo:rerun-if-changed={HOT_CODE}");
    println!("cargo:rerun-if-env-changed={OPT_OUT}");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    let env = |key: &str| std::env::var(key).unwrap_or_default();
    if env("PROFILE") != "release" || !links_with_lld(&env) {
        return false;
    }
    if env(OPT_OUT) == "0" {
        return true;
    }
    let script = Path::new(&env("CARGO_MANIFEST_DIR")).join(HOT_CODE);
    if script.is_file() {
        // The script only adds a section (`INSERT BEFORE .text`): the default layout stays,
        // and a pattern that matches nothing (a renamed function) costs memory, not the build.
        println!(
            "cargo:rustc-link-arg-bin=switchboard=-Wl,-T,{}",
            script.display()
        );
    }
    true
}

/// Whether the final link runs rustc's own lld: its default on x86_64 Linux since Rust
/// 1.90, unless a linker was chosen by hand (the script is only tried with lld).
fn links_with_lld(env: &dyn Fn(&str) -> String) -> bool {
    if env("TARGET") != "x86_64-unknown-linux-gnu"
        || !env("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_empty()
        || env("CARGO_ENCODED_RUSTFLAGS").contains("linker")
    {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let Ok(out) = Command::new(rustc).arg("-vV").output() else {
        return false;
    };
    let version = String::from_utf8_lossy(&out.stdout);
    let minor = version
        .lines()
        .find_map(|l| l.strip_prefix("release: "))
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok());
    matches!(minor, Some(m) if m >= 90)
}
