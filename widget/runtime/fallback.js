// The packed widget's runtime (plain ES2020, no framework): the one side that speaks to the host
// and the one executor of what the controls decide, with or without WebAssembly.
//
// `cargo xtask widget` inlines it as the first <script> of dist/giftgenius-widget.html, without
// its full-line `//` comments. It records the wasm's fate in <html data-wasm>: "loading",
// "ready" (it started), "failed" or "fallback" (WebAssembly refused; the server's markup is shown).
//
// It decides nothing: each control of the server's markup carries its decision as `data-call`
// (widget/src/decide.rs, docs/widget-decisions.md). This runtime paints the result's server
// markup first, asks the host (window.openai, or MCP Apps JSON-RPC over postMessage), hands what
// the host says to the wasm to render (widget/src/hosted.rs) while nobody has acted, and on a
// press takes the screen (the same components' server markup, with what was typed), fills the
// decision's placeholders, makes the call and shows the answer's markup; it keeps the screen
// for a reload (by viewUUID, and in widget state). Strings, keys and markup of its own come
// from #giftgenius-fallback-data.
(() => {
  const d = document, w = window, root = d.documentElement;
  let failed = false, rt = null;
  root.dataset.wasm = "loading";
  w.giftgeniusWasmFailed = reason => {
    if (failed || root.dataset.wasm === "ready") return;
    failed = true;
    root.dataset.wasm = "failed";
    w.console?.error("giftgenius: WebAssembly did not start", reason);
    rt?.fail();
  };
  // The wasm, once started (bridge.rs `start`), hands over its `render(told)`.
  w.giftgeniusHandover = render => {
    root.dataset.wasm = "ready";
    rt?.handover(render);
  };
  // A CSP without 'wasm-unsafe-eval' refuses the wasm or the module script; listen here, as the
  // module's own try/catch cannot see the second case.
  d.addEventListener("securitypolicyviolation", e => {
    const u = e.blockedURI;
    if (e.disposition !== "report" && (u === "wasm-eval" || u === "inline")) {
      w.giftgeniusWasmFailed((e.effectiveDirective || "") + " blocked " + u);
    }
  });
  rt = runtime();
  function runtime() {
    const box = d.getElementById("giftgenius-fallback"), app = d.getElementById("giftgenius-root"),
      oa = w.openai, parent = w.parent !== w && w.parent, wait = {}, hc = {},
      m = /[?&]gg-call-timeout-ms=(\d+)/.exec(location.search), limit = m && +m[1] >= 100 ? +m[1] : 20000,
      face = { fail, handover };
    // `complete`: the call's arguments (null until known), `partial`: as they stream; `wv`: the
    // wasm's render while it may show the view, `live`: it does.
    let data = d.getElementById("giftgenius-fallback-data"), input = {}, complete = null, partial = null,
      cancelled = null, screen = { meta: {} }, home = null, host = {}, last = null, busy = false, ws = null,
      ids = 1, theme, vars = [], view, first = true, acted = false, init, wv = null, live = false, due = false,
      answer;
    if (!box || !(oa || parent)) return null;
    try { data = JSON.parse(data.textContent); } catch { data = {}; }
    const wire = data.wire || {}, post = m => parent.postMessage({ ...m, jsonrpc: "2.0" }, "*");
    // One host request: window.openai's `method` with `arg`, else JSON-RPC's `rpc` with `params`;
    // rejected once the host has left it unanswered for `limit` ms.
    const ask = (method, arg, rpc, params) => new Promise((ok, no) => {
      const id = ids++, late = new Error("the host did not answer in time"),
        t = setTimeout(() => { delete wait[id]; no(late); }, limit),
        done = [v => { clearTimeout(t); ok(v); }, e => { clearTimeout(t); no(e); }];
      if (!oa) { wait[id] = done; return post({ id, method: rpc, params }); }
      Promise.resolve().then(() => oa[method](arg[0], arg[1])).then(...done);
    });
    const each = (sel, f, at) => (at || box).querySelectorAll(sel).forEach(f);
    function paint() {
      const r = box.firstElementChild, mode = hc.displayMode;
      if (r && theme) r.setAttribute("data-theme", theme);
      if (r && /^(fullscreen|pip)$/.test(mode)) r.setAttribute("data-display-mode", mode);
      else if (r) r.removeAttribute("data-display-mode");
      box.setAttribute("aria-busy", busy);
      // The display toggle for the mode the host reports, where it offers full screen.
      const full = modes().includes("fullscreen");
      each("[data-when]", t => {
        t.hidden = !(full && t.getAttribute("data-when") === (mode === "fullscreen" ? mode : "inline"));
      });
      // A control that needs a host method (the payment sheet) shows where the host has it.
      each("[data-needs]", b => {
        if (typeof oa?.[b.getAttribute("data-needs")] === "function") b.hidden = false;
      });
      each("button[data-call]", b => {
        if (busy && !b.disabled) { b.disabled = true; b.dataset.ggBusy = 1; }
        if (!busy && b.dataset.ggBusy) { b.disabled = false; delete b.dataset.ggBusy; }
      });
    }
    // Shows markup; `meta` (tokens) stays in memory for its controls, `args` (the arguments of
    // the call it answers, when they hold no token) are kept with it. A `failure` is not kept:
    // a reload comes back to the screen before it.
    function show(html, meta, args, failure) {
      screen = { meta: meta || {}, args };
      box.innerHTML = html;
      box.hidden = false;
      if (app) app.hidden = true;
      if (failed) root.dataset.wasm = "fallback";
      if (box.querySelector("[data-home]")) home = { html, args };
      paint();
      if (!failure && (failed || acted)) keep();
    }
    // A result's markup shown (false: it has none).
    function result(res, args) {
      const m = res?._meta || {}, html = m[wire.html], has = typeof html === "string";
      if (has) show(html, m, args, res.structuredContent?.ok === false);
      return has;
    }
    // Markup parsed inert (a template: nothing in it loads or runs).
    const inert = html => Object.assign(d.createElement("template"), { innerHTML: html || "" });
    const markup = res => inert(res?._meta?.[wire.html]).content;
    const store = f => ["localStorage", "sessionStorage"].forEach(n => {
      try { if (w[n]) f(w[n]); } catch {}
    });
    const read = (s, k) => { try { return JSON.parse(s.getItem(k)); } catch { return null; } };
    const state = () => ws || oa?.widgetState || {};
    // Widget state with `k` set to `v` (null: removed; no `k`: all cleared), written to the host,
    // and its checkout entry mirrored into storage.
    function save(k, v) {
      const next = k ? { ...state() } : {}, was = state()[wire.checkout];
      if (k && v == null) delete next[k]; else if (k) next[k] = v;
      const now = next[wire.checkout];
      store(s => {
        if (was && (!now || now.draft_id !== was.draft_id)) s.removeItem(wire.store + was.draft_id);
        if (now) s.setItem(wire.store + now.draft_id, now.idempotency_key);
      });
      ws = next;
      return ask("setWidgetState", [next], "ui/update-model-context", { structuredContent: next })
        .catch(() => {});
    }
    // The shown screen, kept for a reload: in storage under this view's id, and on window.openai
    // in widget state too (an opaque frame has no storage). Never a token: those stay in memory.
    // The model reads widget state, so there every element the views mark data-private is
    // emptied (the delivery form); a card restored from it gets them back when its Confirm
    // reopens the draft by id (the decision's `lost` call).
    function keep() {
      const k = wire.viewStore + "html/" + view, html = box.innerHTML, own = screen.meta === host.meta,
        entry = { html, args: screen.args || null, home, host: own, last: last?.plain ? last : null };
      if (!view) return;
      store(s => {
        const index = read(s, wire.viewIndex), keys = (Array.isArray(index) ? index : [])
          .filter(i => typeof i === "string" && i !== k && i.startsWith(wire.viewStore)).concat(k);
        while (keys.length > wire.maxViews) s.removeItem(keys.shift());
        s.setItem(k, JSON.stringify(entry));
        s.setItem(wire.viewIndex, JSON.stringify(keys));
      });
      if (!oa) return;
      const t = inert(html);
      each("[data-private]", e => { e.removeAttribute("value"); e.textContent = ""; }, t.content);
      save(wire.screen, { view, html: t.innerHTML, host: own });
    }
    // The first result names the view; a screen kept under that name before a reload wins.
    function restore(res) {
      const m = res._meta || {}, id = m[wire.viewUuid], ow = oa && state()[wire.screen];
      let e = null;
      first = false;
      if (typeof id !== "string" || !/^[A-Za-z0-9-]{8,64}$/.test(id)) return false;
      view = id;
      store(s => { e = e || read(s, wire.viewStore + "html/" + id); });
      if (!e && ow?.view === id) e = ow;
      if (typeof e?.html !== "string") return false;
      own();
      last = e.last || null;
      home = e.home || (/^[^>]*data-home/.test(m[wire.html]) ? { html: m[wire.html], args: input } : null);
      show(e.html, e.host && m, e.args);
      return true;
    }
    // A result the host announces (the one the view was opened for, or a new one). Only news
    // is shown: the host repeating its result (globals set again) leaves the person's screen.
    function hosted(res) {
      const m = res?._meta, html = m?.[wire.html];
      if (typeof html !== "string" || html === host.html || html === screen.meta[wire.html]) return;
      host = { html, meta: m, res: { structuredContent: res.structuredContent, _meta: m } };
      if ((first && restore(res)) || busy) return;
      first = false;
      last = { tool: res.structuredContent?.tool, args: null, plain: true };
      if (!live) result(res, null);
    }
    // What the host has said, for the wasm to render (widget/src/hosted.rs `read`).
    const told = () => ({
      context: oa ? { theme: oa.theme, locale: oa.locale, displayMode: oa.displayMode,
        availableDisplayModes: modes() } : hc,
      checkout: typeof oa?.requestCheckout === "function",
      input: complete, partial, cancelled, result: host.res || null,
    });
    // The wasm renders `t` (null: it unmounts). One that throws is given up on: the host's
    // result is shown here instead.
    function draw(t) {
      try { wv?.(t); } catch (e) {
        w.console?.error("giftgenius: the wasm's view failed", e);
        wv = null;
        failed = true;
        root.dataset.wasm = "failed";
        if (!live) return;
        live = false;
        if (app) app.hidden = true;
        if (!host.res || !result(host.res, null)) box.hidden = false;
      }
    }
    const feed = () => live && draw(told());
    // The person's: this runtime keeps the view from now on, and the wasm's goes (unmounted).
    function own() {
      acted = true;
      live = false;
      draw(null);
      wv = null;
      if (app) app.hidden = true;
    }
    const controls = at => [...at.querySelectorAll("button, a[href]")],
      named = (at, b) => at.querySelector('[name="' + b.name.replace(/[^A-Za-z0-9_.]/g, "") + '"]'),
      like = (x, e) => {
        const its = [...x.attributes].filter(a => /^data-(?!call$)/.test(a.name));
        return its.length > 0 && its.every(a => e.getAttribute(a.name) === a.value);
      };
    // `b`'s twin in `to` (the same components' other markup): the input of its name, else the
    // control whose data-* attributes (but its decision) `b` has too, of the same rank among such.
    function twin(b, from, to) {
      if (b.name) return named(to, b);
      const t = controls(to).filter(x => like(x, b));
      return t[controls(from).filter(y => t[0] && like(t[0], y)).indexOf(b)];
    }
    // A press (or typing) on the wasm's view: the screen becomes this runtime's. The wasm shows
    // the host's result, whose server markup (the same components, each call's decision on its
    // control) is shown instead, with what was typed; a screen of the wasm's own (a cancelled
    // call) is cloned. `b`'s twin there takes the focus (and the caret) and is returned.
    function take(b) {
      if (host.html) {
        box.innerHTML = host.html;
        each("input[name], textarea[name]", i => {
          const o = named(app, i);
          if (o) { i.value = o.value; i.checked = o.checked; }
        });
      } else box.replaceChildren(app.firstElementChild.cloneNode(true));
      const t = twin(b, app, box), caret = [b.selectionStart, b.selectionEnd];
      own();
      screen = { meta: host.meta || {}, args: null };
      if (box.querySelector("[data-home]")) home = { html: box.innerHTML, args: null };
      box.hidden = false;
      paint();
      t?.focus();
      try { if (b.name) t.setSelectionRange(...caret); } catch {}
      return t;
    }
    // [the call's arguments, placeholders filled; the checkout entry its key needs kept], or null
    // when one cannot be filled. A token comes from the shown result's _meta (`key`, then `at`
    // in it); one named by id also from the host's result. A key: the one kept for the draft,
    // else `or`.
    function fill(c) {
      const a = c.over ? { ...(screen.args || input) } : {}, f = c.form && box.querySelector("fieldset");
      let s = null;
      for (const k in c.args) { if (c.args[k] === null) delete a[k]; else a[k] = c.args[k]; }
      if (f) each("input[name], textarea[name]", i => field(a, i), f);
      for (const k in a) {
        const v = a[k];
        if (!v || typeof v !== "object" || !v.$) continue;
        let t = v.$ === "key" ? kept(v.draft) : v.$ === "answer" ? answer : [screen.meta, v.at && host.meta]
          .map(m => (v.at ? m?.[v.key]?.[v.at] : m?.[v.key])).find(x => typeof x === "string" && x);
        if (v.$ === "key" && !t) s = { draft_id: v.draft, idempotency_key: (t = v.or) };
        if (!t) return null;
        a[k] = t;
      }
      return [a, s];
    }
    function kept(id) {
      const c = state()[wire.checkout];
      let k = c?.draft_id === id ? c.idempotency_key : null;
      store(s => { k = k || s.getItem(wire.store + id); });
      return k;
    }
    // A form input into the arguments: its name is a field path (recipient.address.city); left
    // out when empty, unless aria-required (the server then names it as missing).
    function field(a, i) {
      const val = i.type === "checkbox" ? i.checked || undefined : i.value.trim(), path = i.name.split(".");
      if (val === undefined || (val === "" && i.getAttribute("aria-required") !== "true")) return;
      path.slice(0, -1).forEach(p => { a = a[p] = a[p] || {}; });
      a[path.pop()] = val;
    }
    // The controls under `at` deciding `raw`.
    const same = (at, raw) => [...at.querySelectorAll("[data-call]")]
      .filter(b => b.getAttribute("data-call") === raw);
    // A decided call (widget/src/decide.rs `Call`), made; a placeholder that cannot be filled (a
    // token lost with a reload) makes the `lost` call first (`reopen`).
    function run(c, raw) {
      if (c.edited && edited()) c = c.edited;
      if (fill(c) || !c.lost) return call(c);
      reopen(c, raw, () => fill(c) && call(c));
    }
    // The `lost` call: if its answer has a control deciding the same (`raw`: the same draft at the
    // same price), that answer is taken and `then` follows; if not, the screen stays and says why
    // (`gone`), that control gone.
    function reopen(c, raw, then) {
      call(c.lost, (res, a) => {
        if (!same(markup(res), raw).length) return same(box, raw).forEach(b => b.remove()), note(c.gone);
        result(res, a);
        then();
      });
    }
    // The host's payment sheet (`sheet`: the shown result's session) pays; its answer is the
    // tool's result, else an order whose id the `then` call reads. A missing session is reopened
    // as `run` does. Closing the sheet leaves the screen.
    function sheet(c, raw) {
      const s = screen.meta[c.sheet.key] || host.meta?.[c.sheet.key];
      if (!s || typeof s !== "object") return reopen(c, raw, () => screen.meta[c.sheet.key] && sheet(c, raw));
      busy = true;
      paint();
      Promise.resolve().then(() => oa.requestCheckout(s)).then(r => {
        busy = false;
        if (r?.structuredContent) return (result(r, null) || note(), refocus());
        answer = r?.id || r?.order?.id;
        call(c.then);
      }, () => { busy = false; }).then(paint);
    }
    // Makes the call and shows the answer: by default all of it; `patch`: its element in place of
    // the screen's; a refused form: the card with its field errors; an ok one to `took` if given.
    function call(c, took) {
      const f = fill(c) || [null];
      busy = true;
      paint();
      const saved = f[0] ? Promise.resolve(f[1] && save(wire.checkout, f[1]))
        : Promise.reject(new Error("unfilled"));
      saved.then(() => {
        last = { tool: c.tool, args: f[0], plain: !/"\$"/.test(JSON.stringify(c.args)) };
        return ask("callTool", [c.tool, f[0]], "tools/call", { name: c.tool, arguments: f[0] });
      }).then(res => {
        const sc = res?.structuredContent || {}, errs = c.form && sc.error?.field_errors,
          args = last.plain ? f[0] : null;
        busy = false;
        if (errs?.length) return fieldErrors(markup(res));
        if (took && sc.ok) return took(res, f[0]);
        if (sc.ok && c.forget) forget();
        if (!(sc.ok && c.patch && patch(markup(res), c.patch)) && !result(res, args)) note();
        refocus();
      }, e => {
        busy = false;
        note();
        refocus();
        if (oa || !caps().logging) return;
        const what = { event: "tool_call_failed", tool: c.tool, message: String(e?.message || e) };
        // ext-apps 2.x renames the view's log notification ui/log; a 1.x host knows only the old name.
        post({ method: ext() && !init?.hostCapabilities ? "ui/log" : "notifications/message",
          params: { level: "error", logger: data.initialize.appInfo.name, data: what } });
      }).then(paint);
    }
    // The pressed control is gone with its screen: focus goes on from the new screen's heading.
    function refocus() {
      const a = d.activeElement, t = box.querySelector("#gg-title");
      if (t && (!a || a === d.body || !a.isConnected)) {
        t.tabIndex = -1;
        t.focus();
      }
    }
    function patch(answer, sel) {
      const n = answer.querySelector(sel), o = box.querySelector(sel);
      if (n && o) { o.replaceWith(n); keep(); }
      return !!(n && o);
    }
    const para = (cls, text) => Object.assign(d.createElement("p"), { className: cls, textContent: text });
    // An alert on the screen (after `at`, else at its end): by default "could not be reached".
    function note(text, at) {
      const p = para("gg-inline-error", text || say("unreachable"));
      p.setAttribute("role", "alert");
      if (at) at.after(p); else (box.firstElementChild || box).appendChild(p);
    }
    // Its markup's (else the host's) language (en, es, pt): `o` in it, `say(k)` its sentence k.
    function said(o) {
      const r = box.querySelector(".gg-root[lang]"),
        l = String((r && r.getAttribute("lang")) || (oa || hc).locale || "").slice(0, 2).toLowerCase();
      return (o || {})[data.text?.[l] ? l : "en"] || "";
    }
    const say = k => said(data.text)[k] || "";
    // A checkbox's value is "on" without a value attribute (defaultValue ""): compare checked.
    const edited = () => [...box.querySelectorAll("input, textarea")]
      .some(i => (i.type === "checkbox" ? i.checked !== i.defaultChecked : i.value !== i.defaultValue));
    // A refused form keeps the card: each field error of the answer (worded in the person's
    // language by the server's markup) next to the input it names, what was typed kept, and
    // gone the controls whose decision would send the edited form (Confirm) until the details
    // are updated: read from each decision, not matched in its JSON text.
    function fieldErrors(answer) {
      const fs = box.querySelector("fieldset");
      each(".gg-field-error, .gg-inline-error", x => x.remove());
      each("[data-call]", b => { try { if (JSON.parse(b.getAttribute("data-call"))?.edited) b.remove(); } catch {} });
      each("[data-field]", f => {
        const name = f.getAttribute("data-field"), p = para("gg-field-error", f.textContent),
          i = box.querySelector('[name="' + name.replace(/[^A-Za-z0-9_.]/g, "") + '"]');
        if (!i) return fs.appendChild(p).prepend(name + ": ");
        p.id = i.id + "-error";
        i.setAttribute("aria-invalid", "true");
        i.setAttribute("aria-describedby", p.id);
        i.parentNode.setAttribute("data-invalid", "true");
        i.parentNode.appendChild(p);
      }, answer);
      note(say("needsFix"), fs);
      paint();
    }
    // Delete my data: every screen and key this view kept goes too.
    function forget() {
      const mine = k => k.startsWith(wire.viewStore) || k.startsWith(wire.store) || k === wire.viewIndex;
      store(s => Object.keys(s).filter(mine).forEach(k => s.removeItem(k)));
      screen = { meta: {} };
      last = null;
      save();
    }
    // Typing in the wasm's view makes the screen this runtime's too, so a new screen from the
    // host (or its theme) cannot redraw what was typed away.
    d.addEventListener("input", e => { if (live && app.contains(e.target) && e.target.name) take(e.target); });
    // A press: in this runtime's view, on a control with a decision; in the wasm's, on any
    // control (one without a decision is followed through its twin, see `take`).
    d.addEventListener("click", e => {
      const wasm = live && app.contains(e.target);
      let b = e.target.closest?.(wasm ? "button, a[href]" : "[data-call]"), c;
      if (!b || !(wasm || box.contains(b))) return;
      if (wasm && !b.hasAttribute("data-call")) b = take(b);
      const raw = b?.getAttribute("data-call");
      try { c = JSON.parse(raw) || {}; } catch { return; }
      // An outbound link opens through the host when it can; else the plain link does.
      if (/^https?:/.test(c.open) && (oa ? typeof oa.openExternal === "function" : caps().openLinks)) {
        e.preventDefault();
        return void ask("openExternal", [{ href: c.open }], "ui/open-link", { url: c.open }).catch(() => {});
      }
      if (c.open || b.disabled || busy) return;
      // Another display mode (the wasm's toggle): the host's answer, or its new globals, says
      // which mode is in effect; the view follows that.
      if (c.mode) {
        return void ask("requestDisplayMode", [{ mode: c.mode }], "ui/request-display-mode", { mode: c.mode })
          .then(r => oa || !r?.mode || context({ displayMode: r.mode }), () => {});
      }
      if (app?.contains(b) && !(b = take(b))) return;
      acted = true;
      if ("ask" in c) each("[data-ask]", q => { q.hidden = q.id !== c.ask; });
      // Try again: the call that led here, or the host's own call (a cancelled one, its tool named).
      const again = last || (b.dataset.tool && { tool: b.dataset.tool });
      if (c.retry && again) call({ tool: again.tool, args: again.args || input });
      if (c.tool) run(c, raw);
      if (c.sheet && oa) sheet(c, raw);
      if (!c.back) return;
      busy = true;
      paint();
      save(wire.checkout, null).then(() => {
        busy = false;
        show(home ? home.html : said(data.cancelled), null, home?.args);
        refocus();
      });
    });
    // The host's capabilities: ext-apps 1.x answers ui/initialize with hostCapabilities; 2.x
    // moves them to capabilities.extensions["io.modelcontextprotocol/ui"] (its BREAKING.md).
    // Either is read, so a host that moved them keeps its links and logs.
    const ext = () => init?.capabilities?.extensions?.["io.modelcontextprotocol/ui"];
    const caps = () => ({ ...(ext() || {}), ...(init?.hostCapabilities || {}) });
    // The display modes the host offers: MCP Apps lists them; window.openai has full screen
    // wherever it has requestDisplayMode.
    function modes() {
      const m = oa ? typeof oa.requestDisplayMode === "function" && ["inline", "fullscreen"] : hc.availableDisplayModes;
      return Array.isArray(m) ? m : [];
    }
    // The host's context: theme and display mode on the root, and its styling on the document
    // (variables, safe-area insets, font CSS as text).
    function context(c) {
      const st = root.style;
      let f = d.getElementById("gg-host-fonts");
      if (!c || typeof c !== "object") return;
      for (const k in c) hc[k] = c[k];
      if (c.theme) theme = c.theme === "dark" ? "dark" : "light";
      const s = hc.styles || {}, v = s.variables || {}, css = s.css?.fonts,
        fonts = typeof css === "string" && css.length <= 65536 ? css.trim() : "";
      vars.forEach(n => st.removeProperty(n));
      vars = Object.keys(v).filter(n => /^--[\w-]{1,62}$/.test(n) && typeof v[n] === "string"
        && /\S/.test(v[n]) && v[n].length <= 512 && !/[\u0000-\u001f\u007f]/.test(v[n]));
      vars.forEach(n => st.setProperty(n, v[n].trim()));
      for (const side of ["top", "right", "bottom", "left"]) {
        const px = +hc.safeAreaInsets?.[side], safe = isFinite(px) ? Math.min(Math.max(px, 0), 400) : 0;
        st.setProperty("--gg-safe-" + side, Math.round(safe) + "px");
      }
      if (fonts && !f) (d.head || root).appendChild((f = d.createElement("style"))).id = "gg-host-fonts";
      if (f) f.textContent = fonts;
      paint();
      feed();
    }
    if (oa) {
      const globals = () => {
        complete = oa.toolInput || null;
        input = complete || {};
        hosted({ structuredContent: oa.toolOutput, _meta: oa.toolResponseMetadata });
        context(oa);
        offer();
      };
      w.addEventListener("openai:set_globals", globals);
      globals();
      return face;
    }
    w.addEventListener("message", e => {
      const m = e.data, p = m?.params || {}, f = m && !m.method && wait[m.id], args = p.arguments;
      if (e.source !== parent || m?.jsonrpc !== "2.0") return;
      // Arguments streaming in: the wasm shows them as they come (this runtime shows nothing).
      if (m.method === "ui/notifications/tool-input-partial") {
        due = true;
        partial = args && typeof args === "object" ? args : null;
      }
      if (m.method && m.id != null) {
        // The view offers the host no tools of its own: listing them answers none, calling one
        // answers a tool error (2.x names them ui/list-view-tools and ui/call-view-tool).
        const listed = m.method === "ui/list-view-tools" || m.method === "tools/list",
          called = m.method === "ui/call-view-tool" || m.method === "tools/call";
        post(m.method === "ping" || m.method === "ui/resource-teardown" ? { id: m.id, result: {} }
          : listed ? { id: m.id, result: { tools: [] } }
          : called ? { id: m.id, result: { isError: true,
            content: [{ type: "text", text: "This view has no tool named " + String(p.name).slice(0, 64) + "." }] } }
          : { id: m.id, error: { code: -32601, message: "method not found" } });
      } else if (m.method === "ui/notifications/tool-input") input = complete = args && typeof args === "object" ? args : {};
      else if (m.method === "ui/notifications/tool-result") hosted(p);
      else if (m.method === "ui/notifications/tool-cancelled") {
        cancelled = { reason: p.reason };
        if (!host.html && !busy && !live) {
          first = false;
          show(said(data.toolCancelled));
        }
      } else if (m.method === "ui/notifications/host-context-changed") context(p);
      else if (f) {
        delete wait[m.id];
        f[m.error ? 1 : 0](m.error || m.result);
      }
      feed();
      // After the next frame, so markup just put in is on screen before the wasm renders it.
      w.requestAnimationFrame?.(() => setTimeout(offer, 0));
      setTimeout(offer, 100);
    });
    ask(0, 0, "ui/initialize", data.initialize).then(r => {
      let h;
      init = r || null;
      context(r?.hostContext);
      post({ method: "ui/notifications/initialized", params: {} });
      if (w.ResizeObserver) (new ResizeObserver(() => {
        const b = root.getBoundingClientRect(), size = { width: Math.ceil(b.width),
          height: Math.ceil(b.height) };
        if (size.height !== h) post({ method: "ui/notifications/size-changed", params: size });
        h = size.height;
      })).observe(root);
    }, () => { init = null; }).then(() => {
      // A result the host has not sent by then is still running: the wasm's loading view.
      setTimeout(() => { due = true; offer(); }, 150);
      offer();
    });
    return face;
    function fail() {
      if (!box.hidden) { root.dataset.wasm = "fallback"; keep(); }
    }
    function handover(render) {
      wv = render;
      if (acted || edited()) own();
      offer();
    }
    // Shows the wasm's view once the host's ui/initialize answer is in, if nobody has acted or
    // typed here: it renders the same screen in this task, which takes the focus of the same
    // control. On MCP Apps it waits until the first result is painted here, arguments stream
    // in, or the result is late.
    function offer() {
      if (!wv || live || !app) return;
      if (!oa && (init === undefined || !(due || !box.hidden))) return;
      if (acted || busy || edited()) return own();
      const a = d.activeElement;
      live = true;
      feed();
      if (!live) return;
      const c = a !== box && box.contains(a) && twin(a, box, app);
      app.hidden = false;
      box.hidden = true;
      box.textContent = "";
      if (c) c.focus();
    }
  }
})();
