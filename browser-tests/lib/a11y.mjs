// Accessibility checks of the widget frame: axe-core (the exactly pinned npm package, run inside
// the frame), keyboard focus order and visibility, and reduced motion; and the list of widget
// states the checks and the screenshots walk through, each reached by a real tool call.
//
// axe's source is evaluated in the frame through the DevTools protocol (Playwright's evaluate),
// which the widget's CSP does not govern: nothing is added to the document, no script tag, no
// request; the ChatGPT preview's opaque sandbox frame takes it the same way.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { until } from "./harness.mjs";

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
export const AXE_VERSION = require("axe-core/package.json").version;

/** Impacts that fail the tests; moderate and minor ones are reported only… */
export const FAILING_IMPACTS = ["serious", "critical"];
/**
 * …but for these moderate rules, fixed once (issue 24: the packed document's one <main> and its
 * <h1>) and kept fixed: any finding of them fails too.
 */
export const FAILING_RULES = ["landmark-one-main", "page-has-heading-one"];

/** Whether an axe violation fails the tests. */
export const failing = (v) => FAILING_IMPACTS.includes(v.impact) || FAILING_RULES.includes(v.id);

/** The widget frame (a Playwright Frame). */
export async function widgetFrame(h) {
  const handle = await h.page.$("#widget");
  const frame = handle && (await handle.contentFrame());
  if (!frame) throw new Error("no widget frame");
  return frame;
}

/**
 * Runs axe-core on the widget document; resolves with its violations, each as
 * {id, impact, help, nodes: [selector…], count}.
 */
export async function runAxe(h) {
  const frame = await widgetFrame(h);
  if (!(await frame.evaluate(() => typeof window.axe === "object"))) {
    await frame.evaluate(`${AXE_SOURCE}\n;void 0`);
  }
  return frame.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 4).map((n) => n.target.join(" ")),
      count: v.nodes.length,
    }));
  });
}

/** The visible root's data-state, or null. */
export async function rootState(h) {
  const root = h.frame().locator(".gg-root:visible").first();
  return (await root.count()) ? root.getAttribute("data-state") : null;
}

async function waitForRoot(h, want, what = "data-state", timeout = 15000) {
  const attr = what;
  return until(async () => {
    const roots = h.frame().locator(".gg-root:visible");
    const n = await roots.count();
    for (let i = 0; i < n; i++) {
      if (((await roots.nth(i).getAttribute(attr)) ?? "inline") === want) return true;
    }
    return false;
  }, { timeout, message: `widget ${attr}=${want}` });
}

export const waitForState = (h, want) => waitForRoot(h, want, "data-state");
export const waitForTheme = (h, want) => waitForRoot(h, want, "data-theme");
/** Absent `data-display-mode` is inline. */
export const waitForDisplayMode = (h, want) => waitForRoot(h, want, "data-display-mode");

const initialized = (h) => until(() => h.page.evaluate(() => window.ggPreview.view.mcpInitialized), { message: "ui/notifications/initialized" });

async function fixture(h, name, state) {
  await h.fixture(name);
  await waitForState(h, state);
}

async function click(h, selector) {
  await h.visible(selector).click();
}

/**
 * Every state the view shows, each with how to reach it from a fresh instance. `bridges`: only
 * where the host has the feature (tool-cancelled and streamed input are MCP Apps notifications).
 */
export const STATES = [
  { name: "loading", state: "loading", bridges: ["mcp-apps"], reach: async (h) => {
    await h.page.evaluate(() => window.ggPreview.begin("suggest_gifts"));
    await initialized(h);
    await h.page.evaluate(() => window.ggPreview.partial({ relationship_type: "friend", interests: ["hiking"], budget_max: 100 }));
    await h.visible(".gg-so-far").waitFor();
  } },
  { name: "results", state: "results", reach: (h) => fixture(h, "results", "results") },
  { name: "empty", state: "empty", reach: (h) => fixture(h, "empty", "empty") },
  { name: "partial", state: "results", reach: async (h) => {
    await fixture(h, "partial", "results");
    await h.visible(".gg-banner-warn").waitFor();
  } },
  { name: "error-validation", state: "error", reach: (h) => fixture(h, "validation", "error") },
  { name: "error-business", state: "error", reach: (h) => fixture(h, "business", "error") },
  { name: "error-transient", state: "error", reach: (h) => fixture(h, "transient", "error") },
  { name: "error-permission", state: "error", reach: (h) => fixture(h, "permission", "error") },
  { name: "confirm", state: "confirm", reach: async (h) => {
    await fixture(h, "confirm", "confirm");
    await h.visible('[data-action="confirm"]:enabled').waitFor();
  } },
  { name: "confirm-needed-by-late", state: "confirm", reach: async (h) => {
    await fixture(h, "needed by", "confirm");
    await h.visible('[data-action="switch-shipping"]:enabled').waitFor();
  } },
  { name: "confirm-basket", state: "confirm", reach: async (h) => {
    await fixture(h, "basket", "confirm");
    await h.visible(".gg-basket-lines").waitFor();
  } },
  { name: "confirm-gift-wrapped", state: "confirm", reach: async (h) => {
    await fixture(h, "gift options", "confirm");
    await h.visible('[data-action="confirm"]:enabled').waitFor();
    await h.visible('input[name="gift_wrap"]').check();
    await click(h, '[data-action="update-delivery"]');
    // Only the new draft, wrapped, has the wrap line.
    await h.visible(".gg-summary-list .gg-gift-wrap").waitFor({ timeout: 15000 });
  } },
  { name: "confirm-field-error", state: "confirm", reach: async (h) => {
    await fixture(h, "confirm", "confirm");
    await h.visible('input[name="recipient.address.postal_code"]').fill("99");
    await click(h, '[data-action="update-delivery"]');
    await h.visible("#gg-field-recipient-address-postal_code-error").waitFor({ timeout: 15000 });
  } },
  { name: "confirm-payment-failed", state: "error", reach: async (h) => {
    await fixture(h, "confirm", "confirm");
    await h.setFaults("5xx*1");
    await click(h, '[data-action="confirm"]');
    // The press is the runtime's: it shows commit_order's answer, the error screen with Try again.
    await h.frame().locator(".gg-error:visible").first().waitFor({ timeout: 15000 });
  } },
  { name: "cancelled", state: "cancelled", reach: async (h) => {
    await fixture(h, "confirm", "confirm");
    await h.visible('[data-action="cancel"]:enabled').waitFor();
    await click(h, '[data-action="cancel"]');
    await waitForState(h, "cancelled");
  } },
  { name: "order-placed", state: "order-placed", reach: (h) => fixture(h, "order placed", "order-placed") },
  { name: "checkout", state: "checkout", reach: (h) => fixture(h, "checkout", "checkout") },
  { name: "order-list", state: "order-list", reach: (h) => fixture(h, "orders", "order-list") },
  { name: "order-list-ask-cancel", state: "order-list", reach: async (h) => {
    await fixture(h, "orders", "order-list");
    await click(h, '[data-action="ask-cancel-order"]');
    await h.visible('.gg-ask [data-action="cancel-order"]').waitFor();
  } },
  { name: "order-list-cancelled", state: "order-list", reach: async (h) => {
    await fixture(h, "orders", "order-list");
    await click(h, '[data-action="ask-cancel-order"]');
    await click(h, '.gg-ask [data-action="cancel-order"]');
    await h.visible('[data-status="cancelled"]').waitFor({ timeout: 15000 });
  } },
  { name: "order-list-ask-delete", state: "order-list", reach: async (h) => {
    await fixture(h, "orders", "order-list");
    await click(h, '[data-action="ask-delete-data"]');
    await h.visible('.gg-ask [data-action="delete-data"]').waitFor();
  } },
  { name: "data-deleted", state: "data-deleted", reach: async (h) => {
    await fixture(h, "orders", "order-list");
    await click(h, '[data-action="ask-delete-data"]');
    await click(h, '.gg-ask [data-action="delete-data"]');
    await waitForState(h, "data-deleted");
  } },
  { name: "tool-cancelled", state: "tool-cancelled", bridges: ["mcp-apps"], reach: async (h) => {
    await h.page.evaluate(() => window.ggPreview.begin("suggest_gifts"));
    await initialized(h);
    await h.page.evaluate(() => {
      window.ggPreview.input({ relationship_type: "friend", interests: ["hiking"] });
      window.ggPreview.cancel("the user stopped the request");
    });
    await waitForState(h, "tool-cancelled");
  } },
];

/**
 * Everything that can take keyboard focus in the widget, in document order (what Tab must walk
 * through when no positive tabindex reorders it): [{key, action, label}].
 */
export async function tabbables(h) {
  const frame = await widgetFrame(h);
  return frame.evaluate(() => {
    const all = document.querySelectorAll("button, a[href], input, textarea, select, [tabindex]");
    return [...all]
      .filter((el) => !el.disabled && el.tabIndex >= 0 && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden")
      .map((el, i) => ({ key: el.dataset.ggKey || (el.dataset.ggKey = `k${i}`), action: el.dataset.action || el.name || el.tagName.toLowerCase(),
        label: (el.getAttribute("aria-label") || el.textContent || el.name || "").trim().slice(0, 40) }));
  });
}

/**
 * What has focus inside the widget: its key (set by `tabbables`), whether a focus indicator is
 * drawn (an outline of at least 2 px, or a box shadow) and whether it is scrolled into view,
 * inside the frame and inside every scrolling ancestor (a carousel). null when focus is outside.
 */
export async function focused(h) {
  const frame = await widgetFrame(h);
  return frame.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body || el === document.documentElement) return null;
    const cs = getComputedStyle(el);
    const outline = cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) >= 2;
    const shadow = cs.boxShadow && cs.boxShadow !== "none";
    const r = el.getBoundingClientRect();
    const within = (box) => r.right > box.left + 1 && r.left < box.right - 1 && r.bottom > box.top + 1 && r.top < box.bottom - 1;
    let inView = within({ left: 0, top: 0, right: innerWidth, bottom: innerHeight });
    for (let p = el.parentElement; p && inView; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (/(auto|scroll|hidden)/.test(s.overflowX + s.overflowY) && (p.scrollWidth > p.clientWidth || p.scrollHeight > p.clientHeight)) {
        inView = within(p.getBoundingClientRect());
      }
    }
    return { key: el.dataset.ggKey || null, action: el.dataset.action || el.name || el.tagName.toLowerCase(),
      visibleFocus: outline || shadow, inView, focusVisible: el.matches(":focus-visible") };
  });
}

/**
 * Presses Tab from the host page into the frame and on through every tabbable element of the
 * widget; resolves with the focus stops in order (until focus leaves the widget or comes back
 * to the first stop).
 */
export async function walkTab(h, max = 80) {
  // From the top of the view, wherever the view had put focus (a heading): a sentinel before
  // everything, focusable but out of the tab order, takes focus, so the browser's
  // sequential-navigation starting point is the top and the first Tab lands on the first stop.
  // (Focusing the document element and taking its tabindex away again, as this did before,
  // left the starting point to when the browser's focus fixup ran: now and then the walk began
  // at the second stop.) It stays until the walk ends.
  const frame = await widgetFrame(h);
  await frame.evaluate(() => {
    const start = document.createElement("span");
    start.id = "gg-walk-start";
    start.tabIndex = -1;
    document.body.prepend(start);
    start.focus();
  });
  await h.page.locator("#widget").focus();
  const stops = [];
  // Where the walk starts from and which view draws the widget, for the message of a walk that
  // does not begin at the first stop.
  stops.start = await frame.evaluate(() => {
    const a = document.activeElement, root = document.querySelector("[data-wasm]");
    const what = !a || a === document.body ? "body" : `${a.tagName.toLowerCase()} ${a.dataset.action || a.name || a.id || ""}`.trim();
    return `focus on ${what}, view ${root?.dataset.wasm || "unknown"}`;
  });
  try {
    for (let i = 0; i < max; i++) {
      await h.page.keyboard.press("Tab");
      const f = await focused(h).catch(() => null);
      if (!f) {
        if (stops.length) break;
        continue;
      }
      if (stops.length && f.key && f.key === stops[0].key) break;
      stops.push(f);
    }
  } finally {
    await frame.evaluate(() => document.getElementById("gg-walk-start")?.remove()).catch(() => {});
  }
  return stops;
}

/**
 * Elements of the widget still animated or with a transition of non-zero duration, and a
 * smooth scroll-behavior: what `prefers-reduced-motion: reduce` must leave none of.
 */
export async function motion(h) {
  const frame = await widgetFrame(h);
  return frame.evaluate(() => {
    const seconds = (list) => list.split(",").map((t) => parseFloat(t) * (t.trim().endsWith("ms") ? 0.001 : 1));
    const moving = [];
    for (const el of document.querySelectorAll("*")) {
      for (const pseudo of [null, "::before", "::after"]) {
        const cs = getComputedStyle(el, pseudo);
        const what = `${el.tagName.toLowerCase()}${el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : ""}${pseudo || ""}`;
        if (cs.animationName !== "none" && seconds(cs.animationDuration).some((s) => s > 0.01) && cs.animationPlayState !== "paused") {
          moving.push(`${what}: animation ${cs.animationName} ${cs.animationDuration}`);
        }
        if (cs.transitionProperty !== "none" && seconds(cs.transitionDuration).some((s) => s > 0.01)) {
          moving.push(`${what}: transition ${cs.transitionProperty} ${cs.transitionDuration}`);
        }
        if (pseudo === null && cs.scrollBehavior === "smooth") moving.push(`${what}: scroll-behavior smooth`);
      }
    }
    return moving;
  });
}
