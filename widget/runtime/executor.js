// The executor: runs one decision, the `data-call` of a pressed control (widget/src/decide.rs
// `Next` / `Call`, whose schema is widget/runtime/decision.schema.json). It decides nothing of
// its own: a link opens through the host, a display mode is asked of the host, a question is
// shown (`ask`), the call that led here is made again (`retry`), a tool is called with its
// placeholders filled (`tool`: the `edited` call instead when the form was edited, the `lost`
// call first when a token went with a reload, then the answer shown whole, as a `patch`, as a
// refused form's field errors, or `forget` what was kept), the host's payment sheet opens
// (`sheet`), or the confirmation is left (`back`; `shop` keeping the basket). Each decision is
// read as the schema defines it, never matched in its JSON text.
function executor(env, st, rt) {
  const { box, app, oa, data, wire } = env;
  // The decision `c` (its JSON `raw`) of the control `b`, pressed by the click `e`.
  function press(c, raw, b, e) {
    // An outbound link opens through the host when it can; else the plain link does.
    if (/^https?:/.test(c.open) && (oa ? typeof oa.openExternal === "function" : rt.caps().openLinks)) {
      e.preventDefault();
      return void rt.ask("openExternal", [{ href: c.open }], "ui/open-link", { url: c.open }).catch(() => {});
    }
    if (c.open || b.disabled || st.busy) return;
    // Another display mode (the wasm's toggle): the host's answer, or its new globals, says
    // which mode is in effect; the view follows that.
    if (c.mode) {
      return void rt.ask("requestDisplayMode", [{ mode: c.mode }], "ui/request-display-mode", { mode: c.mode })
        .then(r => oa || !r?.mode || rt.context({ displayMode: r.mode }), () => {});
    }
    if (app?.contains(b) && !(b = rt.take(b))) return;
    st.acted = true;
    if ("ask" in c) rt.each("[data-ask]", q => { q.hidden = q.id !== c.ask; });
    // Try again: the call that led here, or the host's own call (a cancelled one, its tool named).
    const again = st.last || (b.dataset.tool && { tool: b.dataset.tool });
    if (c.retry && again) call({ tool: again.tool, args: again.args || st.input });
    if (c.tool) run(c, raw);
    if (c.sheet && oa) sheet(c, raw);
    if (!c.back && !c.shop) return;
    st.busy = true;
    rt.paint();
    // Cancel forgets the basket too; Keep shopping keeps it for the results' Add.
    Promise.resolve(c.back && rt.keepBasket(null)).then(() => rt.save(wire.checkout, null)).then(() => {
      st.busy = false;
      rt.show(st.home ? st.home.html : rt.said(data.cancelled), null, st.home?.args);
      rt.refocus();
    });
  }
  // The controls under `at` deciding `raw`.
  const same = (at, raw) => [...at.querySelectorAll("[data-call]")]
    .filter(b => b.getAttribute("data-call") === raw);
  // A decided call (widget/src/decide.rs `Call`), made; a placeholder that cannot be filled (a
  // token lost with a reload) makes the `lost` call first (`reopen`).
  function run(c, raw) {
    if (c.edited && rt.edited()) c = c.edited;
    if (rt.fill(c) || !c.lost) return call(c);
    reopen(c, raw, () => rt.fill(c) && call(c));
  }
  // The `lost` call: if its answer has a control deciding the same (`raw`: the same draft at the
  // same price), that answer is taken and `then` follows; if not, the screen stays and says why
  // (`gone`), that control gone.
  function reopen(c, raw, then) {
    call(c.lost, (res, a) => {
      if (!same(rt.markup(res), raw).length) return same(box, raw).forEach(b => b.remove()), rt.note(c.gone);
      rt.result(res, a);
      then();
    });
  }
  // The host's payment sheet (`sheet`: the shown result's session) pays; its answer is the
  // tool's result, else an order whose id the `then` call reads. A missing session is reopened
  // as `run` does. Closing the sheet leaves the screen.
  function sheet(c, raw) {
    const s = st.screen.meta[c.sheet.key] || st.host.meta?.[c.sheet.key];
    if (!s || typeof s !== "object") return reopen(c, raw, () => st.screen.meta[c.sheet.key] && sheet(c, raw));
    st.busy = true;
    rt.paint();
    Promise.resolve().then(() => oa.requestCheckout(s)).then(r => {
      st.busy = false;
      if (r?.structuredContent) return (rt.result(r, null) || rt.note(), rt.refocus());
      st.answer = r?.id || r?.order?.id;
      call(c.then);
    }, () => { st.busy = false; }).then(rt.paint);
  }
  // Makes the call and shows the answer: by default all of it; `patch`: its element in place of
  // the screen's; a refused form: the card with its field errors; an ok one to `took` if given.
  // A call that fails (the host refused it, or never answered) leaves a note, and a log line.
  function call(c, took) {
    const f = rt.fill(c) || [null];
    st.busy = true;
    rt.paint();
    const saved = f[0] ? Promise.resolve(f[1] && rt.save(wire.checkout, f[1]))
      : Promise.reject(new Error("unfilled"));
    saved.then(() => {
      st.last = { tool: c.tool, args: f[0], plain: !rt.placed(c.args) };
      return rt.ask("callTool", [c.tool, f[0]], "tools/call", { name: c.tool, arguments: f[0] });
    }).then(res => {
      const sc = res?.structuredContent || {}, errs = c.form && sc.error?.field_errors,
        args = st.last.plain ? f[0] : null;
      st.busy = false;
      if (errs?.length) return rt.fieldErrors(rt.markup(res));
      if (took && sc.ok) return took(res, f[0]);
      if (sc.ok && c.forget) rt.forget();
      if (!(sc.ok && c.patch && patch(rt.markup(res), c.patch)) && !rt.result(res, args)) rt.note();
      rt.refocus();
    }, e => {
      st.busy = false;
      rt.note();
      rt.refocus();
      rt.log("error", { event: "tool_call_failed", tool: c.tool, message: String(e?.message || e) });
    }).then(rt.paint);
  }
  function patch(answer, sel) {
    const n = answer.querySelector(sel), o = box.querySelector(sel);
    if (n && o) { o.replaceWith(n); rt.keep(); }
    return !!(n && o);
  }
  return { press };
}
