//! The page in two modules, so that a first visit loads only what the calculator needs.
//!
//! The page's own module (`madmax-web`, the app over [`super::app::CalculatorOnly`]) holds the
//! calculator. The explorer, the lessons and library, the validation page and the findings come
//! with the views module (`madmax-views`: the same app over `AllViews`, every view), fetched the
//! first time one of them opens. The page module then hands the page over: it has kept the address
//! (the scenario and the view) up to date, the scenario the user last made valid is saved in this
//! browser, and what the address does not hold (the validation page's filter, the notice on screen
//! and, while the user's edit has problems, the last valid scenario whose results are shown)
//! travels in a property of the window; the views module opens from them as from a shared link,
//! takes what was carried ([`super::state::State::carry_over`]), and serves every view from then
//! on, the calculator included.

use super::state::View;
use gloo::events::EventListener;
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

/// The window property that carries [`Carried`] from one module to the next.
const CARRIED: &str = "madmaxCarried";

/// What the views module needs that the address does not hold.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Carried {
    /// The validation page's filter (kind of plan, GPU family) when "See these runs" opened it.
    pub runs: Option<(String, String)>,
    /// The notice on screen (text, whether an error), which stays; none when there was none.
    /// The address it opens from is the user's own scenario, not a link: none of a link's
    /// notices apply.
    pub notice: Option<(String, bool)>,
    /// The scenario whose results were on screen (as a share query): the last valid one, which
    /// the address does not hold while the user's edit has problems.
    pub good: Option<String>,
}

/// Takes what the page module left for this one: `None` when the page opened here.
pub fn received() -> Option<Carried> {
    let w = super::dom::window()?;
    let value = js_sys::Reflect::get(&w, &JsValue::from_str(CARRIED)).ok().and_then(|v| v.as_string());
    let _ = js_sys::Reflect::delete_property(&w, &JsValue::from_str(CARRIED));
    serde_json::from_str(&value?).ok()
}

/// The window property through which the views module, as it starts, has the page module's app
/// leave the page.
const LEAVE: &str = "madmaxLeave";

thread_local! {
    /// Whether this module has sent for the views module.
    static SENT: Cell<bool> = const { Cell::new(false) };
}

/// Sends for the views module, which starts itself once loaded (`views-loader.js`) and then has
/// `leave` run: this module's app leaves the page, at the moment the views module's arrives.
/// `carried` is left on the window for it (the latest call's: the view is in the address).
pub fn load(view: View, carried: &Carried, leave: impl FnOnce() + 'static) {
    let Some(w) = super::dom::window() else { return };
    let Some(doc) = super::dom::document() else { return };
    let Some(body) = doc.body() else { return };
    if let Ok(json) = serde_json::to_string(carried) {
        let _ = js_sys::Reflect::set(&w, &JsValue::from_str(CARRIED), &JsValue::from_str(&json));
    }
    if SENT.with(|s| s.replace(true)) {
        return;
    }
    let _ = js_sys::Reflect::set(&w, &JsValue::from_str(LEAVE), &Closure::once_into_js(leave));
    // Tests and benchmarks wait for `data-pending="0"`: the views module sets it once it runs.
    super::background::count(1);
    say(&loading(view));
    let Ok(glue) = doc.create_element("script") else { return };
    let _ = glue.set_attribute("src", "./madmax-views.js");
    // The loader calls the glue's `wasm_bindgen`: it runs once the glue has.
    let (doc2, body2) = (doc.clone(), body.clone());
    EventListener::once(&glue, "load", move |_| {
        if let Ok(s) = doc2.create_element("script") {
            let _ = s.set_attribute("src", "./views-loader.js");
            let _ = body2.append_child(&s);
        }
    })
    .forget();
    // Not loaded (offline, say): the calculator still works, and opening a view again tries
    // again.
    let failed = glue.clone();
    EventListener::once(&glue, "error", move |_| {
        failed.remove();
        SENT.with(|s| s.set(false));
        super::background::count(-1);
        say("This part of madmax could not be loaded (madmax-views.js). Check the connection, then open the view again.")
    })
    .forget();
    let _ = body.append_child(&glue);
}

/// In the starting views module: the page module's app, if one runs, leaves the page.
pub fn take_over() {
    let Some(w) = super::dom::window() else { return };
    let key = JsValue::from_str(LEAVE);
    if let Ok(leave) = js_sys::Reflect::get(&w, &key).and_then(|f| f.dyn_into::<js_sys::Function>()) {
        let _ = js_sys::Reflect::delete_property(&w, &key);
        let _ = leave.call0(&JsValue::NULL);
    }
}

/// Says `text` where the page shows that a view is loading: in the view's place when the page
/// module's app runs, else on the loading screen.
fn say(text: &str) {
    let Some(doc) = super::dom::document() else { return };
    let place =
        doc.get_element_by_id(VIEW_LOADING).or_else(|| doc.query_selector("#loading .loading-note").ok().flatten());
    if let Some(p) = place {
        p.set_text_content(Some(text));
    }
}

/// The id of the line the page module's app shows in a view's place while it loads.
pub const VIEW_LOADING: &str = "view-loading";

/// What the page says while `view` loads.
pub fn loading(view: View) -> String {
    let what = match view {
        View::Calculator => "calculator",
        View::Explorer => "explorer",
        View::Learn => "lessons and the library",
        View::Validation => "validation page",
        View::Paper => "findings",
    };
    format!("Loading the {what}…")
}
