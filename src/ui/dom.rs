//! Browser access for the page: URL, history, local storage, clipboard, downloads. Every call
//! returns `Option`/`Result` instead of panicking: a missing API degrades to "not available".

use wasm_bindgen::JsCast;
use web_sys::{Document, HtmlAnchorElement, Window};

const STORAGE_KEY: &str = "madmax.scenario";

pub fn window() -> Option<Window> {
    web_sys::window()
}

pub fn document() -> Option<Document> {
    window()?.document()
}

/// The page's query string, with its `?`.
pub fn query() -> String {
    window().and_then(|w| w.location().search().ok()).unwrap_or_default()
}

/// The page's address without a query.
pub fn base_url() -> String {
    let Some(loc) = window().map(|w| w.location()) else { return String::new() };
    let origin = loc.origin().unwrap_or_default();
    let path = loc.pathname().unwrap_or_default();
    format!("{origin}{path}")
}

/// Replaces the query in the address bar without reloading or adding history entries; the
/// fragment (a story's anchor) stays.
pub fn replace_query(query: &str) {
    let Some(w) = window() else { return };
    let hash = w.location().hash().unwrap_or_default();
    if let Ok(h) = w.history() {
        let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&format!("?{query}{hash}")));
    }
}

/// Goes to `url` (relative to the page), as following a link does.
pub fn go_to(url: &str) {
    if let Some(w) = window() {
        let _ = w.location().assign(url);
    }
}

/// Adds a history entry with this query (the fragment dropped: it named a place on the page
/// being left), so Back returns to the entry before.
pub fn push_query(query: &str) {
    let Some(w) = window() else { return };
    if let Ok(h) = w.history() {
        let _ = h.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&format!("?{query}")));
    }
}

/// Leaves scrolling to the page when the user goes Back or Forward: the browser would restore
/// an entry's position before the page has drawn the view it belongs to.
pub fn manual_scroll_restoration() {
    if let Some(h) = window().and_then(|w| w.history().ok()) {
        let _ = h.set_scroll_restoration(web_sys::ScrollRestoration::Manual);
    }
}

/// How far the page is scrolled down, CSS pixels (0 when unknown).
pub fn scroll_y() -> f64 {
    window().and_then(|w| w.scroll_y().ok()).unwrap_or(0.0)
}

/// Scrolls the page to `y` CSS pixels from its top.
pub fn scroll_to_y(y: f64) {
    if let Some(w) = window() {
        w.scroll_to_with_x_and_y(0.0, y);
    }
}

/// True when the page runs inside a frame of another page.
pub fn framed() -> bool {
    let Some(w) = window() else { return false };
    matches!(w.top(), Ok(Some(top)) if top != w)
}

fn storage() -> Option<web_sys::Storage> {
    window()?.local_storage().ok()?
}

/// Saves the last valid scenario (as a share query) in this browser; says why when it cannot
/// (no storage, or its quota is full).
pub fn save_scenario(query: &str) -> Result<(), String> {
    let s = storage().ok_or("this browser offers no local storage to this page")?;
    s.set_item(STORAGE_KEY, query).map_err(|_| "its storage for this site is full or disabled".to_owned())
}

/// The last valid scenario saved in this browser, as a share query.
pub fn saved_scenario() -> Option<String> {
    storage()?.get_item(STORAGE_KEY).ok()?
}

/// Copies text to the clipboard (asynchronously; failures are silent, the link stays visible).
pub fn copy_text(text: &str) {
    let Some(clip) = window().map(|w| w.navigator().clipboard()) else { return };
    let promise = clip.write_text(text);
    wasm_bindgen_futures::spawn_local(async move {
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
    });
}

/// Offers `content` as a file download.
pub fn download_text(filename: &str, mime: &str, content: &str) {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(content));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options) else { return };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else { return };
    download_url(filename, &url);
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// Offers a URL (an object URL or a data URL) as a file download.
pub fn download_url(filename: &str, url: &str) {
    let Some(doc) = document() else { return };
    let Some(a) = doc.create_element("a").ok().and_then(|e| e.dyn_into::<HtmlAnchorElement>().ok()) else { return };
    a.set_href(url);
    a.set_download(filename);
    if let Some(body) = doc.body() {
        let _ = body.append_child(&a);
        a.click();
        let _ = body.remove_child(&a);
    }
}

/// True when the system asks for a dark colour scheme.
pub fn prefers_dark() -> bool {
    window().and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten()).is_some_and(|m| m.matches())
}

/// True on a phone-width screen: the width at which `styles/main.css` stacks the form over the
/// results (`max-width: 900px`).
pub fn narrow() -> bool {
    window().and_then(|w| w.match_media("(max-width: 900px)").ok().flatten()).is_some_and(|m| m.matches())
}

/// Device pixels per CSS pixel (1 when unknown).
pub fn pixel_ratio() -> f64 {
    window().map(|w| w.device_pixel_ratio()).filter(|r| *r > 0.0).unwrap_or(1.0)
}
