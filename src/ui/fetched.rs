//! The measured runs and the stories, fetched from beside the page the first time a view needs
//! them (the validation page, the library of famous runs), then kept while the page is open.
//! They are 40 KB (gzip) of text that the calculator never reads, so they are not in the
//! WebAssembly; the CLI and the tests embed the same files ([`accuracy::SHIPPED_FILES`],
//! [`stories::STORIES_FILE`], [`accuracy::GEMM_KERNELS_FILE`]). A file that cannot be fetched
//! leaves that view with a message saying which and what to do; nothing else on the page
//! depends on them.

use super::background;
use crate::accuracy;
use crate::stories;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use yew::prelude::*;

/// The shipped data files' texts.
#[derive(Debug)]
pub struct Data {
    /// The CSVs of [`accuracy::SHIPPED_FILES`], in that order.
    pub csvs: Vec<String>,
    /// `stories.json`.
    pub stories: String,
    /// The GEMMs profiled one by one ([`accuracy::GEMM_KERNELS_FILE`]).
    pub kernels: String,
}

impl Data {
    /// The CSVs as the readers take them.
    pub fn csv_texts(&self) -> Vec<&str> {
        self.csvs.iter().map(String::as_str).collect()
    }
}

/// The data, shared; equal when it is the same fetch (props and hook dependencies compare it).
#[derive(Clone, Debug)]
pub struct Fetched(pub Rc<Data>);

impl PartialEq for Fetched {
    fn eq(&self, other: &Fetched) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// Where a fetch stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Loading {
    Pending,
    Ready(Fetched),
    /// Why not: the file and the error, as a sentence.
    Failed(String),
}

thread_local! {
    /// The outcome once known; a failure is kept too, so that a view does not ask again on
    /// every visit (a reload does).
    static DONE: RefCell<Option<Loading>> = const { RefCell::new(None) };
    /// Components waiting for the fetch under way, woken when it ends.
    static WAITING: RefCell<Vec<Callback<Loading>>> = const { RefCell::new(Vec::new()) };
}

/// The shipped data: fetched on the first call of any component, then the same for all.
#[hook]
pub fn use_data() -> Loading {
    let state = use_state(|| DONE.with(|d| d.borrow().clone()).unwrap_or(Loading::Pending));
    {
        let state = state.clone();
        use_effect_with((), move |_| {
            if let Some(done) = DONE.with(|d| d.borrow().clone()) {
                // Finished between this component's first drawing and now.
                state.set(done);
            } else if *state == Loading::Pending {
                let first = WAITING.with(|w| {
                    let mut w = w.borrow_mut();
                    w.push(Callback::from(move |l: Loading| state.set(l)));
                    w.len() == 1
                });
                if first {
                    // The page is not settled while its data is on the way.
                    background::count(1);
                    wasm_bindgen_futures::spawn_local(async {
                        let outcome = match fetch_all().await {
                            Ok(data) => Loading::Ready(Fetched(Rc::new(data))),
                            Err(e) => Loading::Failed(e),
                        };
                        DONE.with(|d| *d.borrow_mut() = Some(outcome.clone()));
                        for wake in WAITING.with(|w| std::mem::take(&mut *w.borrow_mut())) {
                            wake.emit(outcome.clone());
                        }
                        // After the views woken have drawn and started predicting (their
                        // own background runs), so that the page never reads settled between.
                        gloo::timers::callback::Timeout::new(0, || background::count(-1)).forget();
                    });
                }
            }
        });
    }
    (*state).clone()
}

async fn fetch_all() -> Result<Data, String> {
    let mut csvs = Vec::new();
    for name in accuracy::SHIPPED_FILES {
        csvs.push(fetch_text(name).await?);
    }
    Ok(Data {
        csvs,
        stories: fetch_text(stories::STORIES_FILE).await?,
        kernels: fetch_text(accuracy::GEMM_KERNELS_FILE).await?,
    })
}

/// The text of the file `name` beside the page.
async fn fetch_text(name: &str) -> Result<String, String> {
    let failed = |why: String| format!("{name} could not be loaded ({why}); reload the page to try again");
    let describe = |e: wasm_bindgen::JsValue| e.as_string().unwrap_or_else(|| format!("{e:?}"));
    let window = web_sys::window().ok_or_else(|| failed("no window".into()))?;
    let response = JsFuture::from(window.fetch_with_str(name)).await.map_err(|e| failed(describe(e)))?;
    let response: web_sys::Response = response.dyn_into().map_err(|_| failed("not a response".into()))?;
    if !response.ok() {
        return Err(failed(format!("HTTP {}", response.status())));
    }
    let text = response.text().map_err(|e| failed(describe(e)))?;
    let text = JsFuture::from(text).await.map_err(|e| failed(describe(e)))?;
    text.as_string().ok_or_else(|| failed("not text".into()))
}
