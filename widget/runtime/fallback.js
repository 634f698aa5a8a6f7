// The first-paint and no-WebAssembly runtime of the packed widget (plain ES5, no framework).
//
// `cargo xtask widget` inlines it as the first <script> of dist/giftgenius-widget.html, without
// its full-line `//` comments. It records the outcome in <html data-wasm>: "loading", "ready"
// (the wasm took the view), "failed" or "fallback" (WebAssembly refused; the server's markup is
// shown), "server" (the person acted here first, so this runtime keeps the view).
//
// It decides nothing: each control of the server's markup carries its decision as `data-call`
// (docs/widget-decisions.md). This runtime fills the placeholders, asks the host (window.openai,
// or MCP Apps JSON-RPC over postMessage), shows the answer's markup, keeps the screen for a
// reload (by viewUUID, and in widget state) and hands an untouched view to the wasm. Strings,
// keys and markup of its own come from #giftgenius-fallback-data.
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
    if (e.disposition === "report" || (u !== "wasm-eval" && u !== "inline")) return;
    w.giftgeniusWasmFailed((e.effectiveDirective || "") + " blocked " + u);
  });
  rt = runtime();
  function runtime() {
    var box = d.getElementById("giftgenius-fallback"), app = d.getElementById("giftgenius-root"),
      data = d.getElementById("giftgenius-fallback-data"), oa = w.openai, parent = w.parent !== w && w.parent,
      wire, input = {}, screen = { meta: {} }, home = null, host = {}, last = null, busy = false, ws = null,
      ids = 1, wait = {}, hc = {}, theme, vars = [], view, first = true, acted = false, stopped = false,
      notes = [], init, taker = null, held = null, observer = null, due = false, answer = null,
      face = { fail: fail, handover: function (take) { taker = take; offer(); } },
      m = /[?&]gg-call-timeout-ms=(\d+)/.exec(location.search), limit = m && +m[1] >= 100 ? +m[1] : 20000;
    if (!box || !(oa || parent)) return null;
    try { data = JSON.parse(data.textContent); } catch (x) { data = {}; }
    wire = data.wire || {};
    function post(m) { m.jsonrpc = "2.0"; parent.postMessage(m, "*"); }
    // One host request: window.openai's `method` with `arg`, else JSON-RPC's `rpc` with `params`;
    // rejected once the host has left it unanswered for `limit` ms.
    function ask(method, arg, rpc, params) {
      var id = ids++;
      return new Promise(function (ok, no) {
        var late = new Error("the host did not answer in time"),
          t = setTimeout(function () { delete wait[id]; no(late); }, limit),
          done = [function (v) { clearTimeout(t); ok(v); }, function (e) { clearTimeout(t); no(e); }];
        if (!oa) {
          wait[id] = done;
          return post({ id: id, method: rpc, params: params });
        }
        Promise.resolve().then(function () { return oa[method](arg[0], arg[1]); }).then(done[0], done[1]);
      });
    }
    function each(sel, f, at) { [].forEach.call((at || box).querySelectorAll(sel), f); }
    function paint() {
      var r = box.firstElementChild, mode = hc.displayMode;
      if (r && theme) r.setAttribute("data-theme", theme);
      if (r && /^(fullscreen|pip)$/.test(mode)) r.setAttribute("data-display-mode", mode);
      else if (r) r.removeAttribute("data-display-mode");
      box.setAttribute("aria-busy", busy);
      // A control that needs a host method (the payment sheet) shows where the host has it.
      each("[data-needs]", function (b) {
        if (oa && typeof oa[b.getAttribute("data-needs")] === "function") b.hidden = false;
      });
      each("button[data-call]", function (b) {
        if (busy && !b.disabled) { b.disabled = true; b.dataset.ggBusy = 1; }
        if (!busy && b.dataset.ggBusy) { b.disabled = false; delete b.dataset.ggBusy; }
      });
    }
    // Shows markup; `meta` (tokens) stays in memory for its controls, `args` (the arguments of
    // the call it answers, when they hold no token) are kept with it. A `failure` is not kept:
    // a reload comes back to the screen before it.
    function show(html, meta, args, failure) {
      screen = { meta: meta || {}, args: args };
      box.innerHTML = html;
      box.hidden = false;
      if (app) app.hidden = true;
      if (failed) root.dataset.wasm = "fallback";
      if (box.querySelector("[data-home]")) home = { html: html, args: args };
      paint();
      if (!failure && (failed || acted)) keep();
    }
    // A result's markup shown (false: it has none).
    function result(res, args) {
      var m = (res && res._meta) || {}, html = m[wire.html];
      if (typeof html === "string") show(html, m, args, (res.structuredContent || {}).ok === false);
      return typeof html === "string";
    }
    // Markup parsed inert (a template: nothing in it loads or runs).
    function inert(html) {
      var t = d.createElement("template");
      t.innerHTML = html || "";
      return t;
    }
    function markup(res) { return inert(((res && res._meta) || {})[wire.html]).content; }
    function store(f) {
      ["localStorage", "sessionStorage"].forEach(function (n) { try { if (w[n]) f(w[n]); } catch (x) {} });
    }
    function read(s, k) { try { return JSON.parse(s.getItem(k)); } catch (x) { return null; } }
    function state() { return ws || (oa && oa.widgetState) || {}; }
    // Widget state with `k` set to `v` (null: removed; no `k`: all cleared), written to the host,
    // and its checkout entry mirrored into storage.
    function save(k, v) {
      var next = k ? Object.assign({}, state()) : {}, was = state()[wire.checkout], now;
      if (k && v == null) delete next[k]; else if (k) next[k] = v;
      now = next[wire.checkout];
      store(function (s) {
        if (was && (!now || now.draft_id !== was.draft_id)) s.removeItem(wire.store + was.draft_id);
        if (now) s.setItem(wire.store + now.draft_id, now.idempotency_key);
      });
      ws = next;
      return ask("setWidgetState", [next], "ui/update-model-context", { structuredContent: next })
        .then(null, function () {});
    }
    // The shown screen, kept for a reload: in storage under this view's id, and on window.openai
    // in widget state too (an opaque frame has no storage). Never a token: those stay in memory.
    // The model reads widget state, so there every element the views mark data-private is
    // emptied (the delivery form); a card restored from it gets them back when its Confirm
    // reopens the draft by id (the decision's `lost` call).
    function keep() {
      var k = wire.viewStore + "html/" + view, html = box.innerHTML, own = screen.meta === host.meta, t,
        entry = { html: html, args: screen.args || null, home: home, host: own };
      if (!view) return;
      entry.last = last && last.plain ? last : null;
      store(function (s) {
        var index = read(s, wire.viewIndex);
        index = (Array.isArray(index) ? index : []).filter(function (i) {
          return typeof i === "string" && i !== k && i.indexOf(wire.viewStore) === 0;
        }).concat(k);
        while (index.length > wire.maxViews) s.removeItem(index.shift());
        s.setItem(k, JSON.stringify(entry));
        s.setItem(wire.viewIndex, JSON.stringify(index));
      });
      if (!oa) return;
      t = inert(html);
      each("[data-private]", function (e) { e.removeAttribute("value"); e.textContent = ""; }, t.content);
      save(wire.screen, { view: view, html: t.innerHTML, host: own });
    }
    // The first result names the view; a screen kept under that name before a reload wins.
    function restore(res) {
      var m = res._meta || {}, id = m[wire.viewUuid], e = null, own = null, ow = oa && state()[wire.screen];
      first = false;
      if (typeof id !== "string" || !/^[A-Za-z0-9-]{8,64}$/.test(id)) return false;
      view = id;
      store(function (s) {
        e = e || read(s, wire.viewStore + "html/" + id);
        own = own || read(s, wire.viewStore + id);
      });
      if (!e && ow && ow.view === id) e = ow;
      own = own ? own.screen : oa && state()[wire.wasmView] && {};
      // The wasm kept another screen for this view (saved.rs): it shows that one, so paint
      // nothing it would replace; shown here only if the wasm fails after all.
      if (!e && !failed && own && !(own.output && canon(own.output) === canon(res.structuredContent || {}))) {
        held = res;
        return true;
      }
      if (!e || typeof e.html !== "string") return false;
      acted = true;
      last = e.last || null;
      home = e.home || (/^[^>]*data-home/.test(m[wire.html]) ? { html: m[wire.html], args: input } : null);
      show(e.html, e.host && m, e.args);
      return true;
    }
    // JSON with sorted keys, to compare the host's result with the one the wasm saved.
    function canon(v) {
      if (!v || typeof v !== "object") return JSON.stringify(v);
      if (Array.isArray(v)) return "[" + v.map(canon).join(",") + "]";
      return "{" + Object.keys(v).sort().map(function (k) { return JSON.stringify(k) + ":" + canon(v[k]); })
        .join(",") + "}";
    }
    // A result the host announces (the one the view was opened for, or a new one). Only news
    // is shown: the host repeating its result (globals set again) leaves the person's screen.
    function hosted(res) {
      var m = res && res._meta, html = m && m[wire.html];
      if (typeof html !== "string" || html === host.html || html === screen.meta[wire.html]) return;
      host = { html: html, meta: m };
      if ((first && restore(res)) || busy) return;
      first = false;
      last = { tool: (res.structuredContent || {}).tool, args: null, plain: true };
      result(res, null);
    }
    // [the call's arguments, placeholders filled; the checkout entry its key needs kept], or null
    // when one cannot be filled. A token comes from the shown result's _meta; one named by id
    // (an order's) also from the host's result. A key: the one kept for the draft, else `or`.
    function fill(c) {
      var a = {}, s = null, k, v, t, f = c.form && box.querySelector("fieldset");
      if (c.over) Object.assign(a, screen.args || input);
      for (k in c.args) { if (c.args[k] === null) delete a[k]; else a[k] = c.args[k]; }
      if (f) each("input[name], textarea[name]", function (i) { field(a, i); }, f);
      for (k in a) {
        v = a[k];
        if (!v || typeof v !== "object" || !v.$) continue;
        t = v.$ === "key" ? kept(v.draft) : [screen.meta, v.at && host.meta].reduce(function (t, m) {
          var x = m && m[v.key];
          x = v.at && x ? x[v.at] : x;
          return t || (typeof x === "string" && x);
        }, null);
        if (v.$ === "answer") t = answer;
        if (v.$ === "key" && !t) s = { draft_id: v.draft, idempotency_key: t = v.or };
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
    // A form input into the arguments: its name is a field path (recipient.address.city); left
    // out when empty, unless aria-required (the server then names it as missing).
    function field(a, i) {
      var val = i.type === "checkbox" ? i.checked || undefined : i.value.trim(), path = i.name.split(".");
      if (val === undefined || (val === "" && i.getAttribute("aria-required") !== "true")) return;
      path.slice(0, -1).forEach(function (p) { a = a[p] = a[p] || {}; });
      a[path.pop()] = val;
    }
    // The controls under `at` deciding `raw`.
    function same(at, raw) {
      var all = at.querySelectorAll("[data-call]");
      return [].filter.call(all, function (b) { return b.getAttribute("data-call") === raw; });
    }
    // A decided call (widget/src/decide.rs `Call`), made. A placeholder that cannot be filled
    // (a token lost with a reload) makes the `lost` call first; if its answer has a control
    // deciding the same (`raw`: the same draft at the same price), that answer is taken and the
    // call follows; if not, the screen stays and says why (`gone`), that control gone.
    function run(c, raw) {
      if (c.edited && edited()) c = c.edited;
      if (fill(c) || !c.lost) return call(c);
      call(c.lost, function (res, a) {
        if (!same(markup(res), raw).length) {
          same(box, raw).forEach(function (b) { b.remove(); });
          return note(c.gone);
        }
        result(res, a);
        if (fill(c)) call(c);
      });
    }
    // The host's payment sheet (`sheet`: the shown result's session) pays; its answer is the
    // tool's result, else an order whose id the `then` call reads. A missing session makes the
    // `lost` call first, as `run` does. Closing the sheet leaves the screen.
    function sheet(c, raw) {
      var s = screen.meta[c.sheet.key] || (host.meta || {})[c.sheet.key];
      if (!s || typeof s !== "object") return call(c.lost, function (res, a) {
        if (!same(markup(res), raw).length) return note(c.gone);
        result(res, a);
        if (screen.meta[c.sheet.key]) sheet(c, raw);
      });
      busy = true;
      paint();
      Promise.resolve(s).then(function (x) { return oa.requestCheckout(x); }).then(function (r) {
        busy = false;
        if (r && r.structuredContent) return result(r, null) || note();
        answer = r && (r.id || (r.order && r.order.id));
        call(c.then);
      }, function () { busy = false; }).then(paint);
    }
    // Makes the call and shows the answer: by default all of it; `patch`: its element in place of
    // the screen's; a refused form: the card with its field errors; an ok one to `took` if given.
    function call(c, took) {
      var f = fill(c) || [null];
      busy = true;
      paint();
      (f[0] ? Promise.resolve(f[1] && save(wire.checkout, f[1])) : Promise.reject(new Error("unfilled")))
        .then(function () {
          last = { tool: c.tool, args: f[0], plain: !/"\$"/.test(JSON.stringify(c.args)) };
          return ask("callTool", [c.tool, f[0]], "tools/call", { name: c.tool, arguments: f[0] });
        }).then(function (res) {
          var sc = (res && res.structuredContent) || {}, errs = c.form && sc.error && sc.error.field_errors,
            args = last.plain ? f[0] : null;
          busy = false;
          if (errs && errs.length) return fieldErrors(markup(res));
          if (took && sc.ok) return took(res, f[0]);
          if (sc.ok && c.forget) forget();
          if (!(sc.ok && c.patch && patch(markup(res), c.patch)) && !result(res, args)) note();
        }, function (e) {
          var what = { event: "tool_call_failed", tool: c.tool, message: String((e && e.message) || e) };
          busy = false;
          note();
          if (oa || !caps().logging) return;
          post({ method: "notifications/message",
            params: { level: "error", logger: data.initialize.appInfo.name, data: what } });
        }).then(paint);
    }
    function patch(answer, sel) {
      var n = answer.querySelector(sel), o = box.querySelector(sel);
      if (!n || !o) return false;
      o.replaceWith(n);
      keep();
      return true;
    }
    function para(cls, text) {
      var p = d.createElement("p");
      p.className = cls;
      p.textContent = text;
      return p;
    }
    // An alert on the screen (after `at`, else at its end): by default "could not be reached".
    function note(text, at) {
      var p = para("gg-inline-error", text || say("unreachable"));
      p.setAttribute("role", "alert");
      if (at) at.after(p); else (box.firstElementChild || box).appendChild(p);
    }
    // Its markup's (else the host's) language (en, es, pt): `o` in it, `say(k)` its sentence k.
    function said(o) {
      var r = box.querySelector(".gg-root[lang]"), l = (r && r.getAttribute("lang")) || (oa || hc).locale;
      l = String(l || "").slice(0, 2).toLowerCase();
      return (o || {})[(data.text || {})[l] ? l : "en"] || "";
    }
    function say(k) { return said(data.text)[k] || ""; }
    function edited() {
      return [].some.call(box.querySelectorAll("input, textarea"), function (i) {
        // A checkbox's value is "on" without a value attribute (defaultValue ""): compare checked.
        return i.type === "checkbox" ? i.checked !== i.defaultChecked : i.value !== i.defaultValue;
      });
    }
    // A refused form keeps the card: each field error of the answer (worded in the person's
    // language by the server's markup) next to the input it names, what was typed kept.
    function fieldErrors(answer) {
      var fs = box.querySelector("fieldset");
      each(".gg-field-error, .gg-inline-error, [data-call*='\"edited\"']", function (x) { x.remove(); });
      each("[data-field]", function (f) {
        var name = f.getAttribute("data-field"), p = para("gg-field-error", f.textContent),
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
      store(function (s) {
        Object.keys(s).forEach(function (k) {
          if (k.indexOf(wire.viewStore) && k.indexOf(wire.store) && k !== wire.viewIndex) return;
          s.removeItem(k);
        });
      });
      screen = { meta: {} };
      last = null;
      save();
    }
    box.addEventListener("click", function (e) {
      var b = e.target.closest && e.target.closest("[data-call]"), c, raw;
      if (stopped || !b) return;
      try { c = JSON.parse(raw = b.getAttribute("data-call")) || {}; } catch (x) { return; }
      // An outbound link opens through the host when it can; else the plain link does.
      if (/^https?:/.test(c.open) && (oa ? typeof oa.openExternal === "function" : caps().openLinks)) {
        e.preventDefault();
        ask("openExternal", [{ href: c.open }], "ui/open-link", { url: c.open }).then(null, function () {});
        return;
      }
      if (c.open || b.disabled || busy) return;
      acted = true;
      if ("ask" in c) each("[data-ask]", function (q) { q.hidden = q.id !== c.ask; });
      if (c.retry && last) call({ tool: last.tool, args: last.args || input });
      if (c.tool) run(c, raw);
      if (c.sheet && oa) sheet(c, raw);
      if (!c.back) return;
      busy = true;
      paint();
      save(wire.checkout, null).then(function () {
        busy = false;
        show(home ? home.html : said(data.cancelled), null, home && home.args);
      });
    });
    function caps() { return (init && init.hostCapabilities) || {}; }
    // The host's context: theme and display mode on the root, and its styling on the document
    // (variables, safe-area insets, font CSS as text).
    function context(c) {
      var st = root.style, s, v, f = d.getElementById("gg-host-fonts"), css, k;
      if (!c || typeof c !== "object") return;
      for (k in c) hc[k] = c[k];
      if (c.theme) theme = c.theme === "dark" ? "dark" : "light";
      s = hc.styles || {};
      v = s.variables || {};
      vars.forEach(function (n) { st.removeProperty(n); });
      vars = Object.keys(v).filter(function (n) {
        var x = v[n];
        return /^--[\w-]{1,62}$/.test(n) && typeof x === "string" && /\S/.test(x) && x.length <= 512
          && !/[\u0000-\u001f\u007f]/.test(x);
      });
      vars.forEach(function (n) { st.setProperty(n, v[n].trim()); });
      ["top", "right", "bottom", "left"].forEach(function (side) {
        var px = +(hc.safeAreaInsets || {})[side];
        px = isFinite(px) ? Math.min(Math.max(px, 0), 400) : 0;
        st.setProperty("--gg-safe-" + side, Math.round(px) + "px");
      });
      css = s.css && s.css.fonts;
      css = typeof css === "string" && css.length <= 65536 ? css.trim() : "";
      if (css && !f) (d.head || root).appendChild(f = d.createElement("style")).id = "gg-host-fonts";
      if (f) f.textContent = css;
      paint();
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
      return face;
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
      else if (m.method === "ui/notifications/tool-cancelled" && !host.html && !busy) {
        first = false;
        show(said(data.toolCancelled));
      } else if (m.method === "ui/notifications/host-context-changed") context(p);
      else if (!m.method && (f = wait[m.id])) {
        delete wait[m.id];
        f[m.error ? 1 : 0](m.error || m.result);
      }
      // After the next frame, so markup just put in is on screen before the wasm renders it.
      if (w.requestAnimationFrame) w.requestAnimationFrame(function () { setTimeout(offer, 0); });
      setTimeout(offer, 100);
    });
    ask(0, 0, "ui/initialize", data.initialize).then(function (r) {
      var h;
      init = r || null;
      context(r && r.hostContext);
      post({ method: "ui/notifications/initialized", params: {} });
      if (w.ResizeObserver) (observer = new ResizeObserver(function () {
        var r = root.getBoundingClientRect(), size = { width: Math.ceil(r.width), height: Math.ceil(r.height) };
        if (size.height !== h) post({ method: "ui/notifications/size-changed", params: size });
        h = size.height;
      })).observe(root);
    }, function () { init = null; }).then(function () {
      // A result the host has not sent by then is still running: the wasm's loading view.
      setTimeout(function () { due = true; offer(); }, 150);
      offer();
    });
    return face;
    function fail() {
      if (held) { first = true; host = {}; hosted(held); held = null; }
      if (!box.hidden) { root.dataset.wasm = "fallback"; keep(); }
    }
    // Hands the view to the wasm once the host's ui/initialize answer is in, if nobody has
    // acted or typed here: it renders the same state, then this runtime stops and the wasm's
    // markup goes in the same task, with the focus moved to the same control. On MCP Apps it
    // waits until the first result is painted here, arguments stream in, or the result is late.
    function offer() {
      var take = taker, all = "button, a[href], input, textarea", c;
      if (!take || failed || stopped) return;
      if (!oa && (init === undefined || !(due || held || !box.hidden))) return;
      if (acted || busy || edited()) { root.dataset.wasm = "server"; return; }
      c = [].indexOf.call(box.querySelectorAll(all), d.activeElement);
      taker = null;
      stopped = true;
      if (observer) observer.disconnect();
      if (view) store(function (s) { s.removeItem(wire.viewStore + "html/" + view); });
      take(oa ? {} : { init: init, notes: notes, nextId: ids });
      if (app) app.hidden = false;
      box.hidden = true;
      box.textContent = "";
      c = app && c >= 0 && app.querySelectorAll(all)[c];
      if (c) c.focus();
      root.dataset.wasm = "ready";
    }
  }
})();
