// The little of the DOM and the host that the runtime's unit tests need, as plain objects: an
// element whose selector answers are given as a table (no selector engine here: the tests say
// what a query finds), Web Storage, and a recorder of host requests. Not a test file itself.

/** An element: attributes, dataset, `hidden`; `q[selector]` is what its queries find. */
export class El {
  constructor(tag = "div", attrs = {}, props = {}) {
    this.tagName = tag.toUpperCase();
    this.attrs = new Map(Object.entries(attrs));
    this.dataset = {};
    this.hidden = false;
    this.q = {};
    this.focused = false;
    Object.assign(this, props);
  }
  getAttribute(n) { return this.attrs.has(n) ? this.attrs.get(n) : null; }
  setAttribute(n, v) { this.attrs.set(n, String(v)); }
  removeAttribute(n) { this.attrs.delete(n); }
  hasAttribute(n) { return this.attrs.has(n); }
  get attributes() { return [...this.attrs].map(([name, value]) => ({ name, value })); }
  querySelectorAll(sel) { return this.q[sel] || []; }
  querySelector(sel) { return (this.q[sel] || [])[0] || null; }
  contains(e) { return e === this || Object.values(this.q).some((l) => l.includes(e)); }
  remove() { this.removed = true; }
  focus() { this.focused = true; }
}

/** Web Storage: its own enumerable keys are the stored ones, as `Object.keys(localStorage)`. */
export class FakeStorage {
  getItem(k) { return Object.hasOwn(this, k) ? this[k] : null; }
  setItem(k, v) { this[k] = String(v); }
  removeItem(k) { delete this[k]; }
}
Object.defineProperties(FakeStorage.prototype, {
  getItem: { enumerable: false }, setItem: { enumerable: false }, removeItem: { enumerable: false },
});

/** The `wire` block the widget crate writes (widget/src/runtime.rs `wire`), as the tests use it. */
export const WIRE = {
  html: "giftgenius/html", checkout: "giftgeniusCheckout", basket: "basket", store: "giftgenius:ik:", screen: "giftgeniusScreen",
  viewStore: "giftgenius:view:", viewIndex: "giftgenius:views", viewUuid: "viewUUID", maxViews: 3,
};
