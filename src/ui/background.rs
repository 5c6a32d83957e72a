//! Work the page does after it has drawn: a list of items (one evaluation each) run in slices
//! of about 12 ms between the browser's tasks, so that a frame waits for one evaluation at
//! most, and dropped as soon as what it was for changes.

use gloo::timers::callback::Timeout;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use yew::prelude::*;

/// How long one slice runs before it yields to the browser, ms.
const SLICE_MS: f64 = 12.0;

thread_local! {
    /// Background runs in progress on the page.
    static PENDING: Cell<usize> = const { Cell::new(0) };
    /// Set once this module's app has left the page (`handover.rs`): its runs still winding
    /// down must not touch the page's count.
    static SILENT: Cell<bool> = const { Cell::new(false) };
}

/// This module's app has left the page: its background runs no longer count.
pub fn silence() {
    SILENT.with(|s| s.set(true));
}

/// Says on the page how many background runs are in progress (`<html data-pending="0">` once
/// the page has settled): a state tests and benchmarks wait for instead of a time. A fetch
/// of the page's data counts as one (`fetched.rs`).
pub fn count(delta: isize) {
    if SILENT.with(Cell::get) {
        return;
    }
    let n = PENDING.with(|p| {
        let n = p.get().saturating_add_signed(delta);
        p.set(n);
        n
    });
    if let Some(root) = super::dom::document().and_then(|d| d.document_element()) {
        let _ = root.set_attribute("data-pending", &n.to_string());
    }
}

/// Marks the page settled before any background run starts.
pub fn announce() {
    count(0);
}

/// Items still to run and the results so far.
struct Job<T, R> {
    items: Vec<T>,
    done: Vec<R>,
}

/// Runs `run` over the items `plan(deps)` lists, in slices between the browser's tasks, again
/// whenever `deps` changes (abandoning any unfinished run). `None` until every item is done.
#[hook]
pub fn use_background<D, T, R>(deps: D, plan: fn(&D) -> Vec<T>, run: fn(&T) -> R) -> Option<Rc<Vec<R>>>
where
    D: PartialEq + 'static,
    T: 'static,
    R: 'static,
{
    let result = use_state(|| None::<Rc<Vec<R>>>);
    {
        let result = result.clone();
        use_effect_with(deps, move |deps| {
            result.set(None);
            let cancelled = Rc::new(Cell::new(false));
            let job = Rc::new(RefCell::new(Job { items: plan(deps), done: Vec::new() }));
            count(1);
            schedule(job, run, result, cancelled.clone());
            move || cancelled.set(true)
        });
    }
    (*result).clone()
}

fn schedule<T: 'static, R: 'static>(
    job: Rc<RefCell<Job<T, R>>>,
    run: fn(&T) -> R,
    result: UseStateHandle<Option<Rc<Vec<R>>>>,
    cancelled: Rc<Cell<bool>>,
) {
    Timeout::new(0, move || {
        if cancelled.get() {
            count(-1);
            return;
        }
        let t0 = js_sys::Date::now();
        let finished = {
            let mut j = job.borrow_mut();
            let j = &mut *j;
            while j.done.len() < j.items.len() && js_sys::Date::now() - t0 < SLICE_MS {
                let r = run(&j.items[j.done.len()]);
                j.done.push(r);
            }
            j.done.len() == j.items.len()
        };
        if finished {
            let done = std::mem::take(&mut job.borrow_mut().done);
            result.set(Some(Rc::new(done)));
            count(-1);
        } else {
            schedule(job, run, result, cancelled);
        }
    })
    .forget();
}
