// The first-paint and no-WebAssembly runtime of the packed widget (plain ES5, no framework).
//
// `cargo xtask widget` inlines this file as the first <script> of dist/giftgenius-widget.html
// (crates/xtask/src/pack.rs; full-line `//` comments like these are dropped there, so write
// none inside a string), before the wasm glue. It records the outcome in <html data-wasm>:
// "loading", "ready" (the wasm took the view), "failed" or "fallback" (WebAssembly refused; the
// server's markup is shown), "server" (the person acted here first, so this runtime keeps it).
//
// It decides nothing. Each result's markup (_meta["giftgenius/html"], rendered by the server with
// the widget's own views) carries on every control the decision widget/src/decide.rs made for
// it, as `data-call` JSON. This runtime fills the placeholders ({"$":"meta"} from the shown
// result's _meta, {"$":"key"} from the kept idempotency key), calls the host, and shows the
// answer's markup. Besides: the two host bridges (window.openai, MCP Apps JSON-RPC over
// postMessage), keeping the shown screen for a reload (storage under the result's viewUUID,
// and widget state with every data-private element emptied), field errors next to the input they name,
// and handing an untouched view over to the wasm. Its strings come from the JSON block the
// packer writes (#giftgenius-fallback-data: widget/src/decide.rs `runtime_wire`).
(function () {
  var d = document, w = window, root = d.documentElement, failed = false, rt = null;
  root.dataset.wasm = "loading";
  w.giftgeniusWasmFailed = function (reason) {
    if (failed || root.dataset.wasm === "ready") return;
    failed = true;
    root.dataset.wasm = "failed";
    if (w.console) console.error("giftgenius: WebAssembly did not start", reason);
    if (rt) rt.fail();
  };
  // The wasm asks for the view once it has started (bridge.rs `start`); `take` gets null (start
  // as usual), {} (window.openai: the globals say it all) or the MCP Apps session so far.
  w.giftgeniusHandover = function (take) {
    if (rt) return rt.handover(take);
    root.dataset.wasm = "ready";
    take(null);
  };
  // A CSP without 'wasm-unsafe-eval' refuses the wasm or the module script; listen here, as the
  // module's own try/catch cannot see the second case.
  d.addEventListener("securitypolicyviolation", function (e) {
    var u = e.blockedURI;
    if (e.disposition !== "report" && (u === "wasm-eval" || u === "inline")) w.giftgeniusWasmFailed((e.effectiveDirective || "") + " blocked " + u);
  });
  rt = runtime();
  function runtime() {
    var box = d.getElementById("giftgenius-fallback"), app = d.getElementById("giftgenius-root"),
      data = d.getElementById("giftgenius-fallback-data"), oa = w.openai, parent = w.parent !== w ? w.parent : null,
      wire, theme, input = {}, screen = {}, home = null, host = {}, last = null, busy = false, ws = null,
      ids = 1, wait = {}, links = false, logs = false, hc = {}, vars = [], view, first = true, acted = false,
      stopped = false, notes = [], init, answer = null, inited = false, taker = null, held = null, observer = null, due = false,
      m = /[?&]gg-call-timeout-ms=(\d+)/.exec(location.search), limit = m && +m[1] >= 100 ? +m[1] : 20000;
    if (!box || !(oa || parent)) return null;
    try { data = JSON.parse(data.textContent); } catch (x) { data = {}; }
    wire = data.wire || {};
    function post(m) { m.jsonrpc = "2.0"; parent.postMessage(m, "*"); }
    function rpc(method, params) {
      var id = ids++;
      post({ id: id, method: method, params: params });
      return timed(new Promise(function (ok, no) { wait[id] = [ok, no]; }), function () { delete wait[id]; });
    }
    // Rejects once the host has left `p` unanswered for `limit` ms.
    function timed(p, gone) {
      return new Promise(function (ok, no) {
        var t = setTimeout(function () { if (gone) gone(); no(new Error("the host did not answer in time")); }, limit);
        p.then(function (v) { clearTimeout(t); ok(v); }, function (e) { clearTimeout(t); no(e); });
      });
    }
    // One host request on either bridge: window.openai's method, else the JSON-RPC method.
    function ask(method, arg, rpcMethod, params) {
      return oa ? timed(Promise.resolve().then(function () { return oa[method](arg[0], arg[1]); })) : rpc(rpcMethod, params);
    }
    function paint() {
      var r = box.firstElementChild, mode = hc.displayMode;
      if (r && theme) r.setAttribute("data-theme", theme);
      if (r && (mode === "fullscreen" || mode === "pip")) r.setAttribute("data-display-mode", mode);
      else if (r) r.removeAttribute("data-display-mode");
      box.setAttribute("aria-busy", busy);
      // A control that needs a host method (the payment sheet) shows where the host has it.
      box.querySelectorAll("[data-needs]").forEach(function (b) { if (oa && typeof oa[b.getAttribute("data-needs")] === "function") b.hidden = false; });
      box.querySelectorAll("button[data-call]").forEach(function (b) {
        if (busy && !b.disabled) { b.disabled = true; b.dataset.ggBusy = 1; }
        if (!busy && b.dataset.ggBusy) { b.disabled = false; delete b.dataset.ggBusy; }
      });
    }
    // Shows a result's markup; its _meta (tokens) stays in memory for the screen's controls.
    // `args`: the arguments of the call it answers, when they hold no token (they are kept). An
    // answer that is not ok is not kept: a reload comes back to the screen before it.
    function show(res, args) {
      var m = (res && res._meta) || {}, html = m[wire.html];
      if (typeof html !== "string") return false;
      screen = { meta: m, args: args };
      put(html, res.structuredContent && res.structuredContent.ok === false);
      return true;
    }
    function put(html, failure) {
      box.innerHTML = html;
      box.hidden = false;
      if (app) app.hidden = true;
      if (failed) root.dataset.wasm = "fallback";
      if (box.querySelector("[data-home]")) home = { html: html, args: screen.args };
      paint();
      if (!failure && (failed || acted)) keep();
    }
    function store(f) { ["localStorage", "sessionStorage"].forEach(function (n) { try { if (w[n]) f(w[n]); } catch (x) {} }); }
    function state() { return ws || (oa && oa.widgetState) || {}; }
    // Widget state: written to the host, and its checkout entry mirrored into storage.
    function save(next) {
      var was = state()[wire.checkout], now = next[wire.checkout];
      store(function (s) {
        if (was && (!now || now.draft_id !== was.draft_id)) s.removeItem(wire.store + was.draft_id);
        if (now) s.setItem(wire.store + now.draft_id, now.idempotency_key);
      });
      ws = next;
      return ask("setWidgetState", [next], "ui/update-model-context", { structuredContent: next }).then(null, function () {});
    }
    function with_(k, v) { var s = Object.assign({}, state()); if (v == null) delete s[k]; else s[k] = v; return s; }
    // The shown screen, kept for a reload: in storage under this view's id, and on window.openai
    // in widget state too (an opaque frame has no storage). Never a token: those stay in memory.
    // The model can read widget state, so its copy has every element the views mark
    // data-private emptied (the delivery form's details); a card restored from there gets them
    // back when its Confirm reopens the draft by id (the decision's `lost` call).
    function bare(html) {
      var t = d.createElement("template");
      t.innerHTML = html;
      t.content.querySelectorAll("[data-private]").forEach(function (e) { e.removeAttribute("value"); e.textContent = ""; });
      return t.innerHTML;
    }
    function keep() {
      if (!view) return;
      var k = wire.viewStore + "html/" + view, html = box.innerHTML, host_ = screen.meta === host.meta,
        entry = JSON.stringify({ html: html, args: screen.args || null, home: home, last: last && last.plain ? last : null, host: host_ });
      store(function (s) {
        var index = [];
        try { index = JSON.parse(s.getItem(wire.viewIndex) || "[]"); } catch (x) {}
        if (!Array.isArray(index)) index = [];
        index = index.filter(function (i) { return typeof i === "string" && i !== k && i.indexOf(wire.viewStore) === 0; });
        index.push(k);
        while (index.length > wire.maxViews) s.removeItem(index.shift());
        s.setItem(k, entry);
        s.setItem(wire.viewIndex, JSON.stringify(index));
      });
      if (oa) save(with_(wire.screen, { view: view, html: bare(html), host: host_ }));
    }
    // The first result names the view; a screen kept under that name before a reload wins.
    function restore(res) {
      var m = res._meta || {}, id = m[wire.viewUuid], e = null, own = null, sc = res.structuredContent || {}, ow = oa && state()[wire.screen];
      first = false;
      if (typeof id !== "string" || !/^[A-Za-z0-9-]{8,64}$/.test(id)) return false;
      view = id;
      store(function (s) {
        try { e = e || JSON.parse(s.getItem(wire.viewStore + "html/" + id)); } catch (x) {}
        try { own = own || JSON.parse(s.getItem(wire.viewStore + id)); } catch (x) {}
      });
      if (!e && ow && ow.view === id) e = ow;
      own = own || (oa && state()[wire.wasmView] && { screen: {} });
      // The wasm kept another screen for this view (saved.rs): it shows that one, so paint
      // nothing it would replace; shown here only if the wasm fails after all.
      if (!e && !failed && own && own.screen && !(own.screen.output && canon(own.screen.output) === canon(sc))) {
        held = res;
        return true;
      }
      if (!e || typeof e.html !== "string") return false;
      acted = true;
      last = e.last || null;
      home = e.home || (hostHome(res) ? { html: m[wire.html], args: input } : null);
      screen = { meta: e.host ? m : {}, args: e.args };
      put(e.html);
      return true;
    }
    function hostHome(res) { return /^[^>]*data-home/.test((res._meta || {})[wire.html] || ""); }
    // JSON with sorted keys, to compare the host's result with the one the wasm saved.
    function canon(v) {
      if (!v || typeof v !== "object") return JSON.stringify(v);
      if (Array.isArray(v)) return "[" + v.map(canon).join(",") + "]";
      return "{" + Object.keys(v).sort().map(function (k) { return JSON.stringify(k) + ":" + canon(v[k]); }).join(",") + "}";
    }
    // A result the host announces (the one the view was opened for, or a new one). Only news
    // is shown: the host repeating its result (globals set again) leaves the person's screen.
    function hosted(res) {
      var m = res && res._meta, html = m && m[wire.html];
      if (typeof html !== "string" || html === host.html || html === (screen.meta || {})[wire.html]) return;
      host = { html: html, meta: m };
      if (first && restore(res)) return;
      first = false;
      if (busy) return;
      last = { tool: (res.structuredContent || {}).tool, args: null, plain: true };
      show(res, null);
    }
    // [the arguments of a call with placeholders filled, the checkout entry its key needs kept];
    // null when one cannot be filled. A token comes from the shown result's _meta; one named by
    // id (an order's) also from the host's result.
    function fill(c) {
      var a = {}, s = null, k, v, t, f;
      if (c.over) Object.assign(a, screen.args || input);
      for (k in c.args) { if (c.args[k] === null) delete a[k]; else a[k] = c.args[k]; }
      if (c.form && (f = form())) Object.assign(a, f.details);
      for (k in a) {
        v = a[k];
        t = null;
        if (!v || typeof v !== "object" || !v.$) continue;
        if (v.$ === "answer") t = answer;
        else if (v.$ === "key" && !(t = kept(v.draft))) s = { draft_id: v.draft, idempotency_key: t = v.or };
        else [screen.meta, v.at && host.meta].forEach(function (m) { var x = m && m[v.key]; x = v.at && x ? x[v.at] : x; t = t || (typeof x === "string" && x); });
        if (!t) return null;
        a[k] = t;
      }
      return [a, s];
    }
    function kept(id) {
      var c = state()[wire.checkout], k = c && c.draft_id === id ? c.idempotency_key : null;
      store(function (s) { k = k || s.getItem(wire.store + id); });
      return k;
    }
    // A decided call (widget/src/decide.rs `Call`), made. A placeholder that cannot be filled
    // (a token lost with a reload) makes the `lost` call first; if its answer has a control
    // deciding the same (`raw`: the same draft at the same price), that answer is taken and the
    // call follows; if not, the screen stays and says why (`gone`), that control gone.
    function run(c, raw) {
      var f = form();
      if (c.edited && f && f.changed) c = c.edited;
      if (fill(c) || !c.lost) return call(c);
      call(c.lost, function (res, a) {
        if (!same(res, raw)) return gone(c.gone, raw);
        show(res, a);
        if (fill(c)) call(c);
      });
    }
    // The host's payment sheet (`sheet`: the shown result's session) pays; its answer is the
    // tool's result, else an order whose id the `then` call reads. A missing session makes the
    // `lost` call first, as `run` does. Closing the sheet leaves the screen.
    function sheet(c, raw) {
      var s = (screen.meta || {})[c.sheet.key] || (host.meta || {})[c.sheet.key];
      if (!s || typeof s !== "object") return call(c.lost, function (res, a) {
        if (!same(res, raw)) return gone(c.gone, raw);
        show(res, a);
        if ((screen.meta || {})[c.sheet.key]) sheet(c, raw);
      });
      busy = true;
      paint();
      Promise.resolve().then(function () { return oa.requestCheckout(s); }).then(function (r) {
        busy = false;
        if (r && r.structuredContent) return show(r, null) || note();
        answer = r && (r.id || (r.order && r.order.id));
        call(c.then);
      }, function () { busy = false; }).then(paint);
    }
    // The answer's markup, parsed inert (a template: nothing in it loads or runs).
    function parse(res) {
      var t = d.createElement("template");
      t.innerHTML = ((res && res._meta) || {})[wire.html] || "";
      return t.content;
    }
    function same(res, raw) {
      return [].some.call(parse(res).querySelectorAll("[data-call]"), function (b) { return b.getAttribute("data-call") === raw; });
    }
    function gone(text, raw) {
      box.querySelectorAll("[data-call]").forEach(function (b) { if (b.getAttribute("data-call") === raw) b.remove(); });
      note(text);
    }
    // Makes the call and shows the answer: by default all of it; `patch`: its element in place of
    // the screen's; a refused form: the card with its field errors; an ok one to `took` if given.
    function call(c, took) {
      busy = true;
      paint();
      var f = fill(c) || [null];
      (f[0] ? Promise.resolve(f[1] && save(with_(wire.checkout, f[1]))) : Promise.reject(new Error("nothing to send"))).then(function () {
        last = { tool: c.tool, args: f[0], plain: !/"\$"/.test(JSON.stringify(c.args)) };
        return ask("callTool", [c.tool, f[0]], "tools/call", { name: c.tool, arguments: f[0] });
      }).then(function (res) {
        var sc = (res && res.structuredContent) || {};
        busy = false;
        if (c.form && sc.error && (sc.error.field_errors || []).length) return fieldErrors(sc.error.field_errors);
        if (took && sc.ok) return took(res, f[0]);
        // Read before forget(), which clears `last`.
        var kept = last && last.plain ? f[0] : null;
        if (sc.ok && c.forget) forget();
        if (!(sc.ok && c.patch && patch(res, c.patch)) && !show(res, kept)) note();
      }, function (e) {
        busy = false;
        note();
        log({ event: "tool_call_failed", tool: c.tool, message: String((e && e.message) || e) });
      }).then(paint);
    }
    function patch(res, sel) {
      var n = parse(res).querySelector(sel), o = box.querySelector(sel);
      if (!n || !o) return false;
      o.replaceWith(n);
      keep();
      return true;
    }
    function log(what) {
      if (logs && !oa) post({ method: "notifications/message", params: { level: "error", logger: data.initialize.appInfo.name, data: what } });
    }
    // An alert on the screen (after `at`, else at its end): by default "could not be reached".
    function note(text, at) {
      var p = d.createElement("p");
      p.className = "gg-inline-error";
      p.setAttribute("role", "alert");
      p.textContent = text || say("unreachable");
      if (at) at.after(p); else (box.firstElementChild || box).appendChild(p);
    }
    // The person's language: the shown markup's, else the host's locale (en, es or pt).
    function lang() {
      var r = box.querySelector(".gg-root[lang]"), l = String((r && r.getAttribute("lang")) || (oa ? oa.locale : hc.locale) || "").slice(0, 2).toLowerCase();
      return (data.text || {})[l] ? l : "en";
    }
    function say(k) { return ((data.text || {})[lang()] || {})[k] || ""; }
    // A field error in the person's language: its rule's sentence from the widget's catalog
    // (packed as text.fieldRules) with the rule's parts filled in, as field_text.rs does; else
    // the server's English, or "check this field" in the other languages.
    function field(fe) {
      var r = fe.rule, t = r && (((data.text || {})[lang()] || {}).fieldRules || {})[r.code];
      if (typeof t === "string") return t.replace(/\{(\w+)\}/g, function (m, k) { return k !== "code" && r[k] != null ? String(r[k]) : m; });
      return lang() === "en" ? fe.message : say("fieldCheck");
    }
    // The screen's form: input names are field paths (recipient.address.city); an empty input
    // is left out unless aria-required (the server then names it as missing).
    function form() {
      var f = box.querySelector("fieldset"), v = {}, changed = false;
      if (!f) return null;
      f.querySelectorAll("input[name], textarea[name]").forEach(function (i) {
        var val = i.type === "checkbox" ? i.checked || undefined : i.value.trim(), o = v, path = i.name.split(".");
        changed = changed || (i.type === "checkbox" ? i.checked !== i.defaultChecked : i.value !== i.defaultValue);
        if (val === undefined || (val === "" && i.getAttribute("aria-required") !== "true")) return;
        path.slice(0, -1).forEach(function (p) { o = o[p] = o[p] || {}; });
        o[path[path.length - 1]] = val;
      });
      return { changed: changed, details: v };
    }
    // A refused form keeps the card: each message next to the input it names, what was typed kept.
    function fieldErrors(errors) {
      box.querySelectorAll(".gg-field-error, .gg-inline-error").forEach(function (x) { x.remove(); });
      errors.forEach(function (fe) {
        var i = box.querySelector('[name="' + String(fe.field).replace(/[^A-Za-z0-9_.]/g, "") + '"]'), p = d.createElement("p");
        p.className = "gg-field-error";
        p.textContent = field(fe);
        if (i) {
          p.id = i.id + "-error";
          i.setAttribute("aria-invalid", "true");
          i.setAttribute("aria-describedby", p.id);
          i.parentNode.setAttribute("data-invalid", "true");
          i.parentNode.appendChild(p);
        } else {
          p.textContent = fe.field + ": " + p.textContent;
          box.querySelector("fieldset").appendChild(p);
        }
      });
      note(say("needsFix"), box.querySelector("fieldset"));
      box.querySelectorAll("[data-call*='\"edited\"']").forEach(function (c) { c.remove(); });
      paint();
    }
    // Delete my data: every screen and key this view kept goes too.
    function forget() {
      store(function (s) {
        for (var i = s.length - 1; i >= 0; i--) {
          var k = s.key(i);
          if (k && (k.indexOf(wire.viewStore) === 0 || k.indexOf(wire.store) === 0 || k === wire.viewIndex)) s.removeItem(k);
        }
      });
      screen = {};
      last = null;
      save({});
    }
    box.addEventListener("click", function (e) {
      if (stopped) return;
      var l = e.target.closest && e.target.closest("a[href]"), b, c, raw;
      // An outbound link opens through the host when it can; else the plain link does.
      if (l && /^https?:/.test(l.href) && (oa ? typeof oa.openExternal === "function" : links)) {
        e.preventDefault();
        ask("openExternal", [{ href: l.href }], "ui/open-link", { url: l.href }).then(null, function () {});
        return;
      }
      b = e.target.closest && e.target.closest("button[data-call]");
      if (!b || b.disabled || busy) return;
      try { c = JSON.parse(raw = b.getAttribute("data-call")); } catch (x) { return; }
      acted = true;
      if ("ask" in c) box.querySelectorAll("[data-ask]").forEach(function (q) { q.hidden = q.id !== c.ask; });
      if (c.retry && last) call({ tool: last.tool, args: last.args || input });
      if (c.back) {
        busy = true;
        paint();
        save(with_(wire.checkout, null)).then(function () {
          busy = false;
          screen = { args: home && home.args };
          put(home ? home.html : (data.cancelled || {})[lang()] || "");
        });
      }
      if (c.tool) run(c, raw);
      if (c.sheet && oa) sheet(c, raw);
    });
    function context(c) {
      if (!c || typeof c !== "object") return;
      for (var k in c) hc[k] = c[k];
      if (c.theme) theme = c.theme === "dark" ? "dark" : "light";
      look();
      paint();
    }
    // The host's styling on the document: variables, insets, font CSS (as text).
    function look() {
      var st = root.style, s = hc.styles || {}, v = s.variables || {}, now = [], f, ins = hc.safeAreaInsets || {};
      for (var n in v) {
        if (/^--[A-Za-z0-9_-]{1,62}$/.test(n) && typeof v[n] === "string" && v[n].trim() && v[n].length <= 512 && !/[\u0000-\u001f\u007f]/.test(v[n])) {
          st.setProperty(n, v[n].trim());
          now.push(n);
        }
      }
      vars.forEach(function (n) { if (now.indexOf(n) < 0) st.removeProperty(n); });
      vars = now;
      ["top", "right", "bottom", "left"].forEach(function (side) {
        var px = +ins[side];
        st.setProperty("--gg-safe-" + side, (isFinite(px) ? Math.round(Math.min(Math.max(px, 0), 400)) : 0) + "px");
      });
      f = d.getElementById("gg-host-fonts");
      var css = s.css && typeof s.css.fonts === "string" && s.css.fonts.length <= 65536 ? s.css.fonts.trim() : "";
      if (css && !f) {
        f = d.createElement("style");
        f.id = "gg-host-fonts";
        (d.head || root).appendChild(f);
      }
      if (f) f.textContent = css;
    }
    if (oa) {
      var globals = function () {
        if (stopped) return;
        context(oa);
        input = oa.toolInput || {};
        hosted({ structuredContent: oa.toolOutput, _meta: oa.toolResponseMetadata });
      };
      w.addEventListener("openai:set_globals", globals);
      globals();
      return face();
    }
    w.addEventListener("message", function (e) {
      var m = e.data, p, f;
      if (stopped || e.source !== parent || !m || m.jsonrpc !== "2.0") return;
      p = m.params || {};
      if (m.method && m.id == null) notes.push(m);
      // Arguments streaming in: the wasm shows them as they come (this runtime shows nothing).
      if (m.method === "ui/notifications/tool-input-partial") due = true;
      if (m.method && m.id != null) {
        post(m.method === "ping" || m.method === "ui/resource-teardown" ? { id: m.id, result: {} }
          : { id: m.id, error: { code: -32601, message: "method not found" } });
      } else if (m.method === "ui/notifications/tool-input") input = p.arguments || {};
      else if (m.method === "ui/notifications/tool-result") hosted(p);
      else if (m.method === "ui/notifications/tool-cancelled") { if (!host.html && !busy) { first = false; put((data.toolCancelled || {})[lang()] || ""); } }
      else if (m.method === "ui/notifications/host-context-changed") context(p);
      else if (!m.method && (f = wait[m.id])) {
        delete wait[m.id];
        if (m.error) f[1](m.error); else f[0](m.result);
      }
      // After the next frame, so markup just put in is on screen before the wasm renders it.
      if (w.requestAnimationFrame) w.requestAnimationFrame(function () { setTimeout(offer, 0); });
      setTimeout(offer, 100);
    });
    rpc("ui/initialize", data.initialize).then(function (r) {
      var h;
      init = r;
      links = !!(r && r.hostCapabilities && r.hostCapabilities.openLinks);
      logs = !!(r && r.hostCapabilities && r.hostCapabilities.logging);
      context(r && r.hostContext);
      post({ method: "ui/notifications/initialized", params: {} });
      if (w.ResizeObserver) (observer = new ResizeObserver(function () {
        var r = root.getBoundingClientRect(), s = Math.ceil(r.height);
        if (s !== h) post({ method: "ui/notifications/size-changed", params: { width: Math.ceil(r.width), height: h = s } });
      })).observe(root);
    }, function () { init = null; }).then(function () {
      inited = true;
      // A result the host has not sent by then is still running: the wasm's loading view.
      setTimeout(function () { due = true; offer(); }, 150);
      offer();
    });
    return face();
    // What the page sees of this runtime: the wasm's failure and its request for the view.
    function face() { return { fail: fail, handover: function (take) { taker = take; offer(); } }; }
    function fail() {
      if (held) { first = true; host = {}; hosted(held); held = null; }
      if (!box.hidden) { root.dataset.wasm = "fallback"; keep(); }
    }
    // Hands the view to the wasm once the host's ui/initialize answer is in, if nobody has
    // acted or typed here: it renders the same state, then this runtime stops and the wasm's
    // markup goes in the same task, with the focus moved to the same control. On MCP Apps it
    // waits until the first result is painted here, arguments stream in, or the result is late.
    function offer() {
      var take = taker, f = -1, edited = false, c;
      if (!take || failed || stopped || (!oa && !(inited && (due || held || !box.hidden)))) return;
      // A checkbox's value is "on" without a value attribute (defaultValue ""): compare checked.
      box.querySelectorAll("input, textarea").forEach(function (i) { edited = edited || (i.type === "checkbox" ? i.checked !== i.defaultChecked : i.value !== i.defaultValue); });
      if (acted || busy || edited) { root.dataset.wasm = "server"; return; }
      taker = null;
      stopped = true;
      if (observer) observer.disconnect();
      c = box.querySelectorAll("button, a[href], input, textarea");
      for (var i = 0; i < c.length; i++) if (c[i] === d.activeElement) f = i;
      if (view) store(function (s) { s.removeItem(wire.viewStore + "html/" + view); });
      take(oa ? {} : { init: init, notes: notes, nextId: ids });
      if (app) app.hidden = false;
      box.hidden = true;
      box.textContent = "";
      c = app && f >= 0 ? app.querySelectorAll("button, a[href], input, textarea")[f] : null;
      if (c) c.focus();
      root.dataset.wasm = "ready";
    }
  }
})();
