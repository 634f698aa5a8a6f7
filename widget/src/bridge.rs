//! The wasm start-up (wasm32 only): the components mounted, rendering what the host has said.
//!
//! The packed document's runtime (`runtime/*.js`) is the one side that speaks to the host
//! and makes calls. Once this module has started, it hands the runtime one function,
//! `render(told)`, through `window.giftgeniusHandover`: the runtime calls it with everything the
//! host has said so far (see `hosted.rs`) when it shows this view and whenever the host says
//! more, and with `null` when it takes the view back (a press: it shows the answers' markup),
//! which unmounts the components. Without that runtime (a page of its own) nothing is said and
//! nothing is shown.

use std::any::Any;
use std::cell::RefCell;

use js_sys::{Function, Object, Reflect};
use serde_json::{Map, Value};
use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;
use wasm_bindgen::closure::Closure;

use crate::context::RenderContext;
use crate::hosted;
use crate::state::ViewState;
use crate::view;

/// The element the widget mounts into; created when the page does not have it.
const ROOT_ID: &str = "giftgenius-root";

/// The runtime's hand-over function (see the module doc).
const HANDOVER: &str = "giftgeniusHandover";

/// How deep [`to_json`] follows nested arrays and objects; anything deeper is `null`, so a
/// cyclic or hostile value cannot recurse without end.
const MAX_JSON_DEPTH: usize = 64;

/// JS value → JSON, walked through js-sys the way `JSON.stringify` would see it (functions and
/// `undefined` members left out, `NaN` and the infinities `null`), without ever becoming text:
/// the wasm then carries no JSON parser. Whole numbers stay integers, as the contract's typed
/// readers (`u32` counts, minor units) need.
fn to_json(value: &JsValue) -> Value {
    to_json_at(value, 0)
}

fn to_json_at(value: &JsValue, depth: usize) -> Value {
    if let Some(b) = value.as_bool() {
        return Value::Bool(b);
    }
    if let Some(n) = value.as_f64() {
        return number(n);
    }
    if let Some(s) = value.as_string() {
        return Value::String(s);
    }
    if depth >= MAX_JSON_DEPTH || !value.is_object() || value.is_function() {
        return Value::Null;
    }
    if js_sys::Array::is_array(value) {
        let array = js_sys::Array::from(value);
        return Value::Array(array.iter().map(|item| to_json_at(&item, depth + 1)).collect());
    }
    let object: &Object = value.unchecked_ref();
    let mut map = Map::new();
    for key in Object::keys(object).iter() {
        let (Some(name), Ok(member)) = (key.as_string(), Reflect::get(object, &key)) else { continue };
        if member.is_undefined() || member.is_function() {
            continue;
        }
        map.insert(name, to_json_at(&member, depth + 1));
    }
    Value::Object(map)
}

/// A JS number as JSON: an integer when it is a whole one that `f64` holds exactly.
fn number(n: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if n.fract() == 0.0 && n.abs() <= EXACT {
        return if n < 0.0 { Value::from(n as i64) } else { Value::from(n as u64) };
    }
    serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
}

/// The mounted view: the root element and its live region, kept across states (a live region
/// must stay in the document for its new text to be announced), and the state's body below them,
/// mounted anew for each state the host brings (a static view: Leptos then builds it once and
/// carries no code to diff one screen into another).
struct Mounted {
    app: web_sys::Element,
    live: web_sys::Element,
    shown: Option<(ViewState, RenderContext)>,
    body: Option<Box<dyn Any>>,
}

thread_local! {
    static MOUNTED: RefCell<Option<Mounted>> = const { RefCell::new(None) };
}

/// Creates `<div id="giftgenius-app" class="gg-root">` with its live region in `#giftgenius-root`
/// (created if missing), replacing whatever placeholder it held: the markup of `view::static_root`.
fn mount() -> Option<Mounted> {
    let document = web_sys::window()?.document()?;
    let root = match document.get_element_by_id(ROOT_ID) {
        Some(root) => root,
        None => {
            let root = document.create_element("div").ok()?;
            root.set_id(ROOT_ID);
            document.body()?.append_child(&root).ok()?;
            root
        }
    };
    let app = document.create_element("div").ok()?;
    app.set_id("giftgenius-app");
    app.set_class_name("gg-root");
    let live = document.create_element("p").ok()?;
    for (name, value) in [("class", "gg-live"), ("role", "status"), ("aria-live", "polite")] {
        live.set_attribute(name, value).ok()?;
    }
    app.append_child(&live).ok()?;
    root.set_text_content(None);
    root.append_child(&app).ok()?;
    Some(Mounted { app, live, shown: None, body: None })
}

/// Shows `state` in `ctx`: the root's attributes and live region, then the body, unless it is
/// already what is shown (the runtime hands over the host's word on every message).
fn show(m: &mut Mounted, state: ViewState, ctx: RenderContext) {
    if m.shown.as_ref().is_some_and(|(s, c)| *s == state && *c == ctx) {
        return;
    }
    // A keyboard user keeps their place: the control that had focus (the display toggle just
    // pressed) is replaced with the body, so the one at its rank in the new body takes it.
    let focused = focus_rank(&m.app);
    drop(m.body.take());
    let attributes = [
        ("data-theme", Some(ctx.theme.as_str())),
        ("data-state", Some(state.kind())),
        ("data-display-mode", ctx.display_attribute()),
        ("data-home", view::home(&state)),
        ("lang", Some(ctx.lang())),
    ];
    for (name, value) in attributes {
        let _ = match value {
            Some(value) => m.app.set_attribute(name, value),
            None => m.app.remove_attribute(name),
        };
    }
    m.live.set_text_content(Some(&state.announcement(ctx.language())));
    m.shown = Some((state.clone(), ctx.clone()));
    if let Ok(app) = m.app.clone().dyn_into::<web_sys::HtmlElement>() {
        m.body = Some(Box::new(leptos::mount::mount_to(app, move || view::body(state, &ctx))));
    }
    if let Some(rank) = focused
        && let Ok(controls) = m.app.query_selector_all(CONTROLS)
        && let Some(control) = controls.get(rank).and_then(|c| c.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = control.focus();
    }
}

/// What takes keyboard focus in the view.
const CONTROLS: &str = "button, a[href], input, textarea";

/// The rank among the view's controls of the one with focus, if one has it.
fn focus_rank(app: &web_sys::Element) -> Option<u32> {
    let active = web_sys::window()?.document()?.active_element()?;
    let controls = app.query_selector_all(CONTROLS).ok()?;
    (0..controls.length()).find(|&i| controls.get(i).is_some_and(|c| c.is_same_node(Some(&active))))
}

/// Hands the runtime its `render(told)` (see the module doc). The view is built in the call, so
/// the runtime moves the focus into it in the same task.
pub fn start() {
    let render = Closure::<dyn Fn(JsValue)>::new(move |told: JsValue| {
        MOUNTED.with(|mounted| {
            let mut mounted = mounted.borrow_mut();
            if told.is_null() || told.is_undefined() {
                // Dropping the body's handle unmounts it; the root goes with it.
                if let Some(m) = mounted.take() {
                    drop(m.body);
                    m.app.remove();
                }
                return;
            }
            if mounted.is_none() {
                *mounted = mount();
            }
            if let Some(m) = mounted.as_mut() {
                let (state, ctx) = hosted::read(&to_json(&told));
                show(m, state, ctx);
            }
        });
    });
    let handover = web_sys::window()
        .and_then(|w| Reflect::get(&w, &JsValue::from_str(HANDOVER)).ok())
        .and_then(|f| f.dyn_into::<Function>().ok());
    if let Some(handover) = handover {
        let _ = handover.call1(&JsValue::NULL, render.as_ref());
    }
    // The runtime keeps the function as long as the page.
    render.forget();
}
