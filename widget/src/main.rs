//! The wasm entry point: mounts the widget and renders what the host has said (see `bridge.rs`).
//!
//! Natively this binary does nothing; the native side of the crate is `render_to_html`.

#[cfg(target_arch = "wasm32")]
fn main() {
    giftgenius_widget::bridge::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {}
