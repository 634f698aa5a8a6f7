#!/usr/bin/env bash
# How small a Leptos CSR wasm can be: a counter with <Show> and <For>, built with the widget's
# own toolchain, Leptos version, profile (fat LTO, opt-level "z", one codegen unit),
# wasm-bindgen and wasm-opt flags. The widget's size budget is judged against this floor.
#
#   scripts/leptos-floor.sh      # after `cargo xtask setup` (the pinned tools) and a widget build
#
# Env: GIFTGENIUS_TOOLS (~/.cache/giftgenius/tools), FLOOR_DIR (target/leptos-floor).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TOOLS=${GIFTGENIUS_TOOLS:-$HOME/.cache/giftgenius/tools}
DIR=${FLOOR_DIR:-$ROOT/target/leptos-floor}
WBG=$(ls -d "$TOOLS"/wasm-bindgen-cli-*/bin | tail -1)/wasm-bindgen
OPT=$(ls -d "$TOOLS"/binaryen-*/node_modules/binaryen/bin | tail -1)/wasm-opt
LEPTOS=$(awk '/^name = "leptos"$/ {getline; gsub(/[^0-9.]/, ""); print; exit}' "$ROOT/Cargo.lock")

mkdir -p "$DIR/src"
# The same lock file, so every crate is the version the widget builds with.
cp "$ROOT/Cargo.lock" "$ROOT/rust-toolchain.toml" "$DIR/"
cat > "$DIR/Cargo.toml" <<TOML
[package]
name = "leptos-floor"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
leptos = { version = "=$LEPTOS", features = ["csr"] }

[profile.release]
opt-level = "z"
codegen-units = 1
lto = "fat"
TOML
cat > "$DIR/src/main.rs" <<'RS'
use leptos::prelude::*;

#[component]
fn App() -> impl IntoView {
    let (count, set_count) = signal(0);
    view! {
        <div class="app">
            <h1>"Gift ideas"</h1>
            <button on:click=move |_| set_count.update(|n| *n += 1)>"Chosen: " {count}</button>
            <Show when=move || count.get() % 2 == 0 fallback=|| view! { <p>"odd"</p> }>
                <p>"even"</p>
            </Show>
            <For each=move || 0..count.get() key=|i| *i children=|i| view! { <li>{i}</li> }/>
        </div>
    }
}

fn main() {
    mount_to_body(App);
}
RS
(cd "$DIR" && cargo build --quiet --offline --release --target wasm32-unknown-unknown)
"$WBG" --target web --no-typescript --out-dir "$DIR/out" "$DIR/target/wasm32-unknown-unknown/release/leptos-floor.wasm"
# trunk's data-wasm-opt="z" with the features the widget's build enables.
"$OPT" -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals \
  --enable-reference-types --strip-debug --strip-producers "$DIR/out/leptos-floor_bg.wasm" -o "$DIR/out/opt.wasm"
size() { printf '%-28s raw %8d B   gzip -9 -n %8d B\n' "$1" "$(stat -c %s "$2")" "$(gzip -9 -n -c "$2" | wc -c)"; }
echo "Leptos $LEPTOS CSR counter (the floor):"
size "  wasm (wasm-opt -Oz)" "$DIR/out/opt.wasm"
size "  JS glue" "$DIR/out/leptos-floor.js"
