//! `giftgenius-fallback OUT.json`: writes what the packer needs from this crate (the fallback
//! runtime's source and its data block, `giftgenius_widget::fallback::packer_input`) to OUT.json.
//!
//! Why a binary: `cargo xtask widget` builds it with the other binaries xtask starts
//! (`crates/xtask/src/bins.rs`) and runs it instead of linking the widget crate, so xtask starts
//! without compiling Leptos. Native only; on wasm32 it does nothing, like `main.rs` natively.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(out), None) = (args.next(), args.next()) else {
        eprintln!("usage: giftgenius-fallback OUT.json");
        return std::process::ExitCode::from(2);
    };
    let json = giftgenius_widget::fallback::packer_input().to_string();
    match std::fs::write(&out, json) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("giftgenius-fallback: writing {}: {e}", std::path::Path::new(&out).display());
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(target_arch = "wasm32")]
fn main() {}
