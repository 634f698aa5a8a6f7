// "A person who clicks before the wasm takes over", made deterministic: an init script that
// Playwright runs in every document before its own scripts (the widget frame included, opaque or
// cross-site) holds WebAssembly's compile and instantiate calls until the test releases them.
// The widget's first paint (its server-rendered markup, driven by widget/runtime/*.js) shows and
// works meanwhile; the wasm module cannot start, so nothing races the person's click. The packed
// widget carries its wasm inline (no fetch a route could delay), and wasm-bindgen's init goes
// through WebAssembly.instantiateStreaming or WebAssembly.instantiate, which is what is held.

/** Installed with `context.addInitScript`; only the widget's documents (/preview/widget) are held. */
export function wasmGate() {
  if (location.pathname !== "/preview/widget" || typeof WebAssembly !== "object") return;
  let open;
  const gate = new Promise((resolve) => { open = resolve; });
  for (const name of ["instantiateStreaming", "instantiate", "compileStreaming", "compile"]) {
    const original = WebAssembly[name];
    if (typeof original !== "function") continue;
    WebAssembly[name] = function held(...args) {
      window.__ggWasmAsked = true;
      return gate.then(() => original.apply(WebAssembly, args));
    };
  }
  // The test's handle: lets the held calls through (they then run as they would have).
  window.__ggReleaseWasm = () => { open(); return true; };
}
