// The no-WebAssembly fallback runtime of the packed widget (plain ES5, no framework).
//
// `cargo xtask widget` inlines this file as the first <script> of dist/giftgenius-widget.html
// (crates/xtask/src/pack.rs; full-line `//` comments like these are dropped there, so write
// none inside a string). It runs before the wasm glue, records the outcome in
// <html data-wasm>: "loading", then "ready" (set by the packer's init code), "failed"
// (WebAssembly or the glue script was refused) or "fallback" (refused, and the
// server-rendered HTML is shown). The packer also writes the JSON this file reads from
// #giftgenius-fallback-data: `initialize` = widget/src/rpc.rs `initialize_params()`,
// `cancelled` = lib.rs `render_to_html(ViewState::Cancelled)` (view.rs `cancelled_view`),
// `toolCancelled` = the same of `ViewState::ToolCancelled` without reason or retry (view.rs
// `tool_cancelled_view`), and `wire` = the contract's strings (crates/giftgenius-types/src/wire.rs:
// _meta keys, the storage prefixes, the idempotency-key prefix and derivation; saved.rs: the
// index of saved views and its limit), so no markup, text or contract string of the widget is
// written here.
//
// On failure it is a small copy of the wasm app's behaviour; keep each part in step with the
// Rust it mirrors (widget/src/…):
//   fallback() set-up        bridge.rs `start` (feature detection: window.openai, else the
//                            parent frame), `start_openai`, `start_mcp_apps`
//   post / rpc / wait        bridge.rs `McpAppsBridge::post`/`request`, rpc.rs `request`,
//                            `notification`, `Pending`
//   paint                    the `busy` flag of state.rs `ViewState::ConfirmPurchase` and the
//                            theme of context.rs `RenderContext` (data-theme on the root)
//   show / hosted            controller.rs `Controller::show_tool_output` and `remember`; the
//                            HTML is the server's render_to_html (lib.rs) in
//                            _meta["giftgenius/html"], the token flow.rs `confirmation_token`
//   call / note              controller.rs `Controller::call` and `handle` (one call at a time)
//   state / store / save     controller.rs `Host::widget_state`/`set_widget_state`, bridge.rs
//                            `storage::sync`, flow.rs `storage_changes`, `with_checkout`,
//                            rpc.rs `checkout_storage_key`, `model_context_params`
//   key                      controller.rs `Controller::key_for`, flow.rs
//                            `idempotency_key_for_draft`, `idempotency_key_from_bytes`
//   confirm                  controller.rs `Controller::confirm` (prepare again if the token
//                            was lost)
//   cancel                   controller.rs `Controller::cancel`; with no results to go
//                            back to, `ViewState::Cancelled` rendered by the packer
//   click handler            action.rs `Action` (the data-action names), flow.rs
//                            `merge_arguments` for suggestions, controller.rs `retry`
//   context / look           rpc.rs `HostContext::merge`, `render_context`, `presentation`
//                            (`style_variable_ok`, the font CSS, the safe area), context.rs
//                            `Theme::parse`, bridge.rs `apply_presentation`; display mode as
//                            `data-display-mode` on the root (no full-screen button here)
//   message listener         rpc.rs `parse` and `reply`; bridge.rs `start_mcp_apps`;
//                            tool-cancelled: controller.rs `show_tool_cancelled` (never a
//                            retry: the server-rendered markup has none); tool-input-partial is
//                            not shown (the spec allows it; the fallback shows no loading state)
//                            but hands the view to the wasm, which shows it
//   log                      controller.rs `Host::log` (tool_call_failed only, no arguments),
//                            rpc.rs `log_params`, `host_accepts_logs`
//   view / keep / restore    saved.rs: the screen under the first result's viewUUID (here the
//                            shown HTML under its own key, `…/view/html/<id>`), the index and
//                            its limit; controller.rs `restore` (the host's token for the same
//                            draft is kept; it is never stored)
//   ui/initialize, resize    rpc.rs `initialize_params` (from the data block), bridge.rs
//                            `report_size`; `links` from rpc.rs `host_opens_links`
//   timeout                  bridge.rs `call_timeout_ms` (a request the host leaves
//                            unanswered fails, so the buttons come back)
//   link click handler       view/order.rs `checkout_view` and bridge.rs `open_link`:
//                            ui/open-link or openExternal, a plain link where neither exists
//   form / details / edit    delivery_form.rs `read` and `details_from` (an input whose value
//                            differs from its default was edited), controller.rs
//                            `prepare_arguments` and `edit_delivery`; a refused edit keeps the
//                            card and puts each field error next to its field like
//                            view/delivery.rs `delivery_form` renders it
//   ask / cancelOrder /      controller.rs `ask`, `cancel_order` (the key from flow.rs
//   deleteData               `cancel_key_for_order`), `delete_data` (bridge.rs
//                            `storage::forget_all`); the questions are in the server's markup,
//                            hidden, as view/order.rs `ask_view` renders them
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
  // The wasm asks for the view once it has started (bridge.rs `start`); `take` gets what it
  // needs to go on from here: null (nothing was started here, start as usual), {} (ChatGPT:
  // the globals say it all) or the MCP Apps session so far ({init, notes, nextId}). Only a
  // view nobody has touched yet is handed over, so an action is never lost or done twice.
  w.giftgeniusHandover = function (take) {
    if (rt) return rt.handover(take);
    root.dataset.wasm = "ready";
    take(null);
  };
  // A CSP without 'wasm-unsafe-eval' (or without our module's hash) refuses the wasm or the
  // module script; the module's own try/catch cannot see the second case, so listen here.
  d.addEventListener("securitypolicyviolation", function (e) {
    var u = e.blockedURI;
    if (e.disposition !== "report" && (u === "wasm-eval" || u === "inline")) w.giftgeniusWasmFailed((e.effectiveDirective || "") + " blocked " + u);
  });
  rt = runtime();
  // First paint: each result's server-rendered HTML (_meta["giftgenius/html"]) as soon as the
  // host delivers it, its data-action buttons driven over the same bridge the wasm would use.
  // The wasm takes over an untouched view (`handover`); without WebAssembly, or once the
  // person acted here, this runtime keeps the view for good.
  function runtime() {
    var box = d.getElementById("giftgenius-fallback"), app = d.getElementById("giftgenius-root"),
      data = d.getElementById("giftgenius-fallback-data"),
      oa = w.openai, parent = w.parent !== w ? w.parent : null,
      wire, theme, input = {}, last, back, backArgs, seen, draft, token, busy = false, ws = {}, ids = 1, wait = {},
      delivery = null, cancelTokens = {}, delTok = null,
      links = false, logs = false, hc = {}, vars = [], view, first = true,
      acted = false, stopped = false, notes = [], init, inited = false, taker = null, held = null, observer = null,
      due = false,
      m = /[?&]gg-call-timeout-ms=(\d+)/.exec(location.search),
      limit = m && +m[1] >= 100 ? +m[1] : 20000;
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
    function paint() {
      var r = box.firstElementChild, mode = hc.displayMode;
      if (r && theme) r.setAttribute("data-theme", theme);
      if (r && (mode === "fullscreen" || mode === "pip")) r.setAttribute("data-display-mode", mode);
      else if (r) r.removeAttribute("data-display-mode");
      box.setAttribute("aria-busy", busy);
      box.querySelectorAll("button[data-action]").forEach(function (b) {
        if (busy && !b.disabled) { b.disabled = true; b.dataset.ggBusy = 1; }
        if (!busy && b.dataset.ggBusy) { b.disabled = false; delete b.dataset.ggBusy; }
      });
    }
    // Shows one result; `args` null means "the host's tool input" (it may arrive late).
    function show(res, name, args) {
      var sc = (res && res.structuredContent) || {}, m = (res && res._meta) || {}, html = m[wire.html];
      if (typeof html !== "string") return false;
      seen = html;
      if (sc.draft && sc.draft.id) { draft = sc.draft; token = m[wire.token]; delivery = m[wire.delivery] || null; }
      if (sc.tool === "list_orders" && sc.ok) { cancelTokens = m[wire.cancelTokens] || {}; delTok = m[wire.deleteToken] || null; }
      if (name === "suggest_gifts" && sc.ok) { back = html; backArgs = args; }
      put(html, !(name === "commit_order" && !sc.ok));
      return true;
    }
    // A failed commit is not kept: a reload comes back to the confirmation, as in the wasm view.
    function put(html, persist) {
      box.innerHTML = html;
      box.hidden = false;
      if (app) app.hidden = true;
      if (failed) root.dataset.wasm = "fallback";
      paint();
      if (persist !== false && (failed || acted)) keep();
    }
    // The shown screen, kept under this view's id for a reload; never the token.
    function keep() {
      if (!view) return;
      var k = wire.viewStore + "html/" + view, entry = JSON.stringify({ html: box.innerHTML, draft: draft || null, delivery: delivery || null, back: back || null, backArgs: backArgs || null, last: last && last[0] !== "commit_order" ? last : null });
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
    }
    // The first result names the view; a screen kept under that name before a reload wins.
    function restore(res) {
      var m = res._meta || {}, id = m[wire.viewUuid], e = null, own = null, sc = res.structuredContent || {};
      first = false;
      if (typeof id !== "string" || !/^[A-Za-z0-9-]{8,64}$/.test(id)) return false;
      view = id;
      store(function (s) {
        try { e = e || JSON.parse(s.getItem(wire.viewStore + "html/" + id)); } catch (x) {}
        try { own = own || JSON.parse(s.getItem(wire.viewStore + id)); } catch (x) {}
      });
      // The wasm kept another screen for this view (saved.rs): it shows that one, so paint
      // nothing that it would replace; shown here only if the wasm fails after all.
      if (!e && !failed && own && own.screen && !(own.screen.output && canon(own.screen.output) === canon(sc))) {
        held = res;
        return true;
      }
      if (!e || typeof e.html !== "string") return false;
      acted = true;
      draft = e.draft; delivery = e.delivery || null; back = e.back; backArgs = e.backArgs; last = e.last;
      token = draft && sc.draft && sc.draft.id === draft.id ? m[wire.token] : null;
      seen = m[wire.html];
      put(e.html);
      return true;
    }
    // JSON with sorted keys, to compare the host's result with the one the wasm saved.
    function canon(v) {
      if (!v || typeof v !== "object") return JSON.stringify(v);
      if (Array.isArray(v)) return "[" + v.map(canon).join(",") + "]";
      return "{" + Object.keys(v).sort().map(function (k) { return JSON.stringify(k) + ":" + canon(v[k]); }).join(",") + "}";
    }
    function hosted(res) {
      if (first && !oa && res && res._meta && restore(res)) return;
      if (busy || !res || !res._meta || res._meta[wire.html] === seen) return;
      var tool = (res.structuredContent || {}).tool;
      if (show(res, tool, null)) last = [tool, null];
    }
    // `own` may take a result itself (return true), before it is shown as the server rendered it.
    function call(name, args, own) {
      busy = true;
      last = [name, args];
      paint();
      var p = oa ? timed(Promise.resolve().then(function () { return oa.callTool(name, args); }))
        : rpc("tools/call", { name: name, arguments: args });
      return p.then(function (res) { busy = false; (own && own(res)) || show(res, name, args) || note(); }, function (e) {
        busy = false;
        note();
        log({ event: "tool_call_failed", tool: name, message: String((e && e.message) || e) });
      }).then(paint);
    }
    function log(what) {
      if (logs && !oa) post({ method: "notifications/message", params: { level: "error", logger: data.initialize.appInfo.name, data: what } });
    }
    function note() {
      var p = d.createElement("p");
      p.className = "gg-inline-error";
      p.setAttribute("role", "alert");
      p.textContent = say("unreachable");
      (box.firstElementChild || box).appendChild(p);
    }
    // The person's language: the shown markup's, else the host's locale (en, es or pt).
    function lang() {
      var r = box.querySelector(".gg-root[lang]"), l = String((r && r.getAttribute("lang")) || (oa ? oa.locale : hc.locale) || "").slice(0, 2).toLowerCase();
      return (data.text || {})[l] ? l : "en";
    }
    function say(k) { return ((data.text || {})[lang()] || {})[k] || ""; }
    function mine(m) { return (m && m[lang()]) || ""; }
    // A field error in the person's language: its rule's sentence from the widget's catalog
    // (packed as text.fieldRules) with the rule's parts filled in, as field_text.rs does; else
    // the server's English, or "check this field" in the other languages.
    function field(fe) {
      var r = fe.rule, t = r && (((data.text || {})[lang()] || {}).fieldRules || {})[r.code];
      if (typeof t === "string") return t.replace(/\{(\w+)\}/g, function (m, k) { return k !== "code" && r[k] != null ? String(r[k]) : m; });
      return lang() === "en" ? fe.message : say("fieldCheck");
    }
    function state() { return (oa ? oa.widgetState : ws) || {}; }
    function store(f) { ["localStorage", "sessionStorage"].forEach(function (n) { try { if (w[n]) f(w[n]); } catch (x) {} }); }
    // Widget state, mirrored into storage keyed by draft id; resolves once the host answered.
    function save(next) {
      var was = state().checkout, now = next.checkout;
      store(function (s) {
        if (was && (!now || now.draft_id !== was.draft_id)) s.removeItem(wire.store + was.draft_id);
        if (now) s.setItem(wire.store + now.draft_id, now.idempotency_key);
      });
      ws = next;
      return (oa ? timed(Promise.resolve().then(function () { return oa.setWidgetState(next); }))
        : rpc("ui/update-model-context", { structuredContent: next })).then(null, function () {});
    }
    // The draft's idempotency key: kept, or minted once and persisted before it is used.
    // Derived from the draft id like the wasm path (flow::idempotency_key_for_draft), never from
    // the token (tokens expire), so a reload that lost widget state and storage, and holds a
    // fresh token, still finds the same key. Random only where crypto.subtle is missing.
    function key(id) {
      var k = null, made;
      [ws.checkout, state().checkout].forEach(function (c) { if (!k && c && c.draft_id === id) k = c.idempotency_key; });
      store(function (s) { k = k || s.getItem(wire.store + id); });
      if (k) return Promise.resolve(k);
      made = window.crypto && crypto.subtle
        ? crypto.subtle.digest("SHA-256", new TextEncoder().encode(wire.keyDerivation + id)).then(function (d) { return new Uint8Array(d); })
        : Promise.resolve(crypto.getRandomValues(new Uint8Array(16)));
      return made.then(function (b) {
        k = wire.keyPrefix;
        for (var i = 0; i < 16; i++) k += (b[i] < 16 ? "0" : "") + b[i].toString(16);
        return save(Object.assign({}, state(), { checkout: { draft_id: id, idempotency_key: k } })).then(function () { return k; });
      });
    }
    // The card's delivery form: its values as details, and whether any input was edited.
    function form() {
      var f = box.querySelector("#gg-delivery-form"), v = {}, changed = false, o;
      if (!f) return null;
      f.querySelectorAll("input[name], textarea[name]").forEach(function (i) {
        if (i.type === "checkbox") { v[i.name] = i.checked; changed = changed || i.checked !== i.defaultChecked; }
        else { v[i.name] = i.value.trim(); changed = changed || i.value !== i.defaultValue; }
      });
      o = function (n) { return v[n] ? v[n] : undefined; };
      return { changed: changed, details: {
        recipient: { name: v["recipient.name"] || "", address: { line1: v["recipient.address.line1"] || "",
          line2: o("recipient.address.line2"), city: v["recipient.address.city"] || "", region: o("recipient.address.region"),
          postal_code: o("recipient.address.postal_code"), country: (v["recipient.address.country"] || "").toUpperCase() } },
        gift_message: o("gift_message"), save_address: !!v.save_address, from_saved_address: false } };
    }
    function details(g, dl) {
      var a = { gift_id: g.gift.id, quantity: g.quantity, shipping: g.shipping, currency: g.total.currency };
      if (dl && !dl.from_saved_address) a.recipient = dl.recipient;
      if (dl && dl.gift_message) a.gift_message = dl.gift_message;
      if (dl && dl.save_address) a.save_address = true;
      return a;
    }
    // Prepares the draft again with the edited details: a new draft to confirm, or the field
    // errors next to the fields of this card, with what was typed kept.
    function edit(dl) {
      var g = draft;
      if (!g) return;
      call("prepare_order", details(g, dl), function (res) {
        var sc = (res && res.structuredContent) || {}, e = sc.error, p, c;
        if (sc.ok || !e || !(e.field_errors || []).length) return false;
        box.querySelectorAll(".gg-field-error, .gg-inline-error").forEach(function (x) { x.remove(); });
        e.field_errors.forEach(function (fe) {
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
            p.textContent = fe.field + ": " + field(fe);
            (box.querySelector("#gg-delivery-form") || box).appendChild(p);
          }
        });
        p = d.createElement("p");
        p.className = "gg-inline-error";
        p.setAttribute("role", "alert");
        p.textContent = say("needsFix");
        box.querySelector("#gg-delivery-form").after(p);
        c = box.querySelector('[data-action="confirm"]');
        if (c) c.remove();
        return true;
      });
    }
    function confirm() {
      var g = draft, t = token, f = form();
      if (!g) return;
      if (f && f.changed) return edit(f.details);
      // Token lost (reload after a widget-made draft): prepare again, then confirm what it shows.
      if (!t) return call("prepare_order", details(g, delivery));
      busy = true;
      paint();
      key(g.id).then(function (k) { call("commit_order", { draft_id: g.id, idempotency_key: k, confirmation_token: t }); });
    }
    function cancel() {
      var next = Object.assign({}, state());
      delete next.checkout;
      busy = true;
      paint();
      save(next).then(function () {
        busy = false;
        draft = token = null;
        if (back) last = ["suggest_gifts", backArgs];
        put(back || mine(data.cancelled));
      });
    }
    // The order list's second-click questions: shown by the first click, hidden by "Keep it".
    function ask(sel) {
      box.querySelectorAll(".gg-ask").forEach(function (q) { q.hidden = !sel || !q.matches(sel); });
    }
    function forget() {
      store(function (s) {
        for (var i = s.length - 1; i >= 0; i--) {
          var k = s.key(i);
          if (k && (k.indexOf(wire.viewStore) === 0 || k.indexOf(wire.store) === 0 || k === wire.viewIndex)) s.removeItem(k);
        }
      });
    }
    function cancelOrder(id) {
      var t = cancelTokens[id];
      if (!t || !(window.crypto && crypto.subtle)) return;
      busy = true;
      paint();
      crypto.subtle.digest("SHA-256", new TextEncoder().encode(wire.keyDerivation + id)).then(function (b) {
        var k = wire.cancelKeyPrefix;
        b = new Uint8Array(b);
        for (var i = 0; i < 16; i++) k += (b[i] < 16 ? "0" : "") + b[i].toString(16);
        call("cancel_order", { order_id: id, idempotency_key: k, confirmation_token: t });
      });
    }
    function deleteData() {
      if (!delTok) return;
      call("delete_my_data", { confirmation_token: delTok }, function (res) {
        if (!res || !res.structuredContent || !res.structuredContent.ok) return false;
        forget();
        draft = token = delivery = delTok = last = null;
        cancelTokens = {};
        save({});
        return false;
      });
    }
    box.addEventListener("click", function (e) {
      if (stopped) return;
      var l = e.target.closest && e.target.closest("a[href]");
      // An outbound link opens through the host when it can; else the plain link does.
      if (l && /^https?:/.test(l.href) && (oa ? typeof oa.openExternal === "function" : links)) {
        e.preventDefault();
        (oa ? timed(Promise.resolve().then(function () { return oa.openExternal({ href: l.href }); }))
          : rpc("ui/open-link", { url: l.href })).then(null, function () {});
        return;
      }
      var b = e.target.closest && e.target.closest("button[data-action]"), a = b && b.dataset.action, s = {}, m;
      if (!b || b.disabled || busy) return;
      acted = true;
      if (a === "choose") call("prepare_order", { gift_id: b.dataset.giftId });
      if (a === "confirm") confirm();
      if (a === "update-delivery") { m = form(); if (m) edit(m.details); }
      if (a === "ask-cancel-order") ask('.gg-ask[data-ask="cancel-order"][data-order-id="' + b.dataset.orderId + '"]');
      if (a === "ask-delete-data") ask('.gg-ask[data-ask="delete-data"]');
      if (a === "dismiss") ask(null);
      if (a === "cancel-order") cancelOrder(b.dataset.orderId);
      if (a === "delete-data") deleteData();
      if (a === "cancel") cancel();
      if (a === "retry" && last && last[0]) call(last[0], last[1] || input);
      else if (a === "retry" && draft) confirm();
      if (a === "suggestion") {
        try { s = JSON.parse(b.dataset.setArguments) || {}; } catch (x) {}
        m = Object.assign({}, backArgs || input);
        for (var k in s) { if (s[k] === null) delete m[k]; else m[k] = s[k]; }
        call("suggest_gifts", m);
      }
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
      else if (m.method === "ui/notifications/tool-cancelled") { if (!seen && !busy) { first = false; put(mine(data.toolCancelled)); } }
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
      if (held) { first = true; hosted(held); held = null; }
      if (!box.hidden) { root.dataset.wasm = "fallback"; keep(); }
    }
    // Hands the view to the wasm once the host's ui/initialize answer is in, if nobody has
    // acted or typed here: it gets the session so far and renders the same state, then this
    // runtime stops and the server's markup goes in the same task (no frame in between), with
    // the focus moved to the same control. On MCP Apps it waits until the first result is
    // painted here (the server's markup shows without waiting for the wasm's start-up and
    // first render), arguments stream in, or the result is late.
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
