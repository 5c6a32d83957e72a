//! The page's Web Workers: as many as the browser reports cores (at most [`MAX_WORKERS`]),
//! started on the first search and kept, each evaluating batches of a search's plans
//! ([`super::offload`]). Where they cannot help (no worker support, a worker that fails to
//! load, dies or refuses a search) the search runs on the page, as it did before workers.

use super::explorer::{Item, Job};
use super::offload::{Reply, Request, Start};
use crate::engine::explore::Outcome;
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Most workers the page starts.
const MAX_WORKERS: usize = 8;

/// The script Trunk writes to start the worker (`data-loader-shim` in index.html).
const WORKER_URL: &str = "./madmax-worker_loader.js";

/// What came back for a search.
enum Event {
    Done(Vec<(usize, Outcome)>),
    /// Items a worker will not answer for (it refused the search or died): the page evaluates
    /// them; `refused` when the search cannot use workers at all.
    Lost {
        items: Vec<Item>,
        refused: bool,
    },
}

struct Slot {
    worker: web_sys::Worker,
    ready: bool,
    dead: bool,
    /// The search it was last started on.
    started: Option<u64>,
    /// Batches out (of which search), in the order sent: a worker answers in that order.
    out: VecDeque<(u64, Vec<Item>)>,
}

impl Slot {
    fn usable(&self) -> bool {
        self.ready && !self.dead
    }
}

/// Batches a worker holds at once: the next is waiting when it finishes one, while the page
/// takes the last answer in.
const IN_FLIGHT: usize = 2;

#[derive(Default)]
struct Pool {
    slots: Vec<Slot>,
    created: bool,
    /// Wakes each search's owner when something came back for it, or a worker got ready.
    wakers: BTreeMap<u64, Rc<dyn Fn()>>,
    inbox: Vec<(u64, Event)>,
    next_search: u64,
}

/// A worker's message or error handler.
type Handler = Closure<dyn FnMut(JsValue)>;

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::default());
    /// The closures the workers call, kept alive as long as the page.
    static HANDLERS: RefCell<Vec<Handler>> = const { RefCell::new(Vec::new()) };
}

/// Starts the page's workers, once per page (a view that may search calls it when it opens,
/// so that they have loaded by the first search).
pub fn warm() {
    let count = POOL.with(|p| {
        let mut p = p.borrow_mut();
        if p.created {
            return 0;
        }
        p.created = true;
        let cores = web_sys::window().map_or(1.0, |w| w.navigator().hardware_concurrency());
        (cores as usize).clamp(1, MAX_WORKERS)
    });
    for _ in 0..count {
        let Ok(worker) = web_sys::Worker::new(WORKER_URL) else { break };
        let index = POOL.with(|p| {
            let mut p = p.borrow_mut();
            p.slots.push(Slot {
                worker: worker.clone(),
                ready: false,
                dead: false,
                started: None,
                out: VecDeque::new(),
            });
            p.slots.len() - 1
        });
        let on_message = Handler::new(move |e: JsValue| {
            let text =
                e.dyn_into::<web_sys::MessageEvent>().ok().and_then(|m| m.data().as_string()).unwrap_or_default();
            answered(index, serde_json::from_str::<Reply>(&text).ok());
        });
        let on_error = Handler::new(move |e: JsValue| {
            // The event's default is to report the error on the console; the page recovers.
            if let Ok(e) = e.dyn_into::<web_sys::Event>() {
                e.prevent_default();
            }
            died(index);
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        HANDLERS.with(|h| h.borrow_mut().extend([on_message, on_error]));
    }
}

/// A worker's message (`None`: one the page cannot read, taken as a refusal).
fn answered(index: usize, reply: Option<Reply>) {
    let wake = POOL.with(|p| {
        let mut p = p.borrow_mut();
        let p = &mut *p;
        let Some(slot) = p.slots.get_mut(index) else { return Vec::new() };
        let out = match reply {
            Some(Reply::Ready) => None,
            _ => slot.out.pop_front(),
        };
        let (search, event) = match (reply, out) {
            (Some(Reply::Ready), _) => {
                slot.ready = true;
                return p.wakers.values().cloned().collect();
            }
            (Some(Reply::Done { search, outcomes }), Some((asked, items)))
                if search == asked
                    && outcomes.len() == items.len()
                    && outcomes.iter().zip(&items).all(|((at, _), it)| *at == it.at) =>
            {
                let done = outcomes.into_iter().zip(&items).map(|((at, f), it)| (at, f.outcome(it))).collect();
                (search, Event::Done(done))
            }
            // Refused, or an answer the page cannot read: the search does without workers.
            (_, Some((search, items))) => (search, Event::Lost { items, refused: true }),
            (_, None) => return Vec::new(),
        };
        // Nothing is kept for a search that has ended.
        let Some(w) = p.wakers.get(&search).cloned() else { return Vec::new() };
        p.inbox.push((search, event));
        vec![w]
    });
    for w in wake {
        w();
    }
}

/// A worker failed to load, or died: its items go back to the page, and it gets no more.
fn died(index: usize) {
    let wake = POOL.with(|p| {
        let mut p = p.borrow_mut();
        let slot = p.slots.get_mut(index)?;
        slot.dead = true;
        slot.worker.terminate();
        let mut wake = Vec::new();
        for (search, items) in std::mem::take(&mut slot.out) {
            if let Some(w) = p.wakers.get(&search) {
                wake.push(w.clone());
                p.inbox.push((search, Event::Lost { items, refused: false }));
            }
        }
        Some(wake)
    });
    for w in wake.into_iter().flatten() {
        w();
    }
}

/// One search's use of the workers. Dropping it forgets the search: what comes back for it
/// afterwards is ignored.
pub struct Offload {
    search: u64,
    /// The `Start` request, as text, sent to each worker before its first batch.
    start: Rc<str>,
    /// Set once a worker refused the search: the page evaluates the rest itself.
    local: Cell<bool>,
}

impl Offload {
    /// Offloads `job`'s search, `file` being its scenario's MAD-Max file before the task
    /// setting `task` was applied; `wake` is called when the search has news (then call
    /// [`Offload::turn`]). Starts the page's workers on first use.
    pub fn new(job: &Job, file: Value, task: &str, wake: impl Fn() + 'static) -> Offload {
        warm();
        let search = POOL.with(|p| {
            let mut p = p.borrow_mut();
            p.next_search += 1;
            let id = p.next_search;
            p.wakers.insert(id, Rc::new(wake));
            id
        });
        let start = serde_json::to_string(&Request::Start(Start::of(search, job, file, task))).unwrap_or_default();
        Offload { search, start: start.into(), local: Cell::new(false) }
    }

    /// Takes back what the workers answered and gives idle ones more of `job`; returns the
    /// number of workers busy with this search. At 0 with the job unfinished, evaluate on the
    /// page ([`Job::step`]): no worker is ready (yet), or none can serve it.
    pub fn turn(&self, job: &mut Job) -> usize {
        let events: Vec<Event> = POOL.with(|p| {
            let mut p = p.borrow_mut();
            let (mine, rest) = std::mem::take(&mut p.inbox).into_iter().partition(|(s, _)| *s == self.search);
            p.inbox = rest;
            mine.into_iter().map(|(_, e)| e).collect::<Vec<_>>()
        });
        for e in events {
            match e {
                Event::Done(outcomes) => {
                    for (at, o) in outcomes {
                        job.accept(at, o);
                    }
                }
                Event::Lost { items, refused } => {
                    self.local.set(self.local.get() || refused);
                    for it in items {
                        let o = job.evaluate(&it);
                        job.accept(it.at, o);
                    }
                }
            }
        }
        POOL.with(|p| {
            let mut p = p.borrow_mut();
            let workers = p.slots.iter().filter(|s| s.usable()).count().max(1);
            let mut busy = 0;
            for slot in p.slots.iter_mut().filter(|s| s.usable()) {
                while !self.local.get() && slot.out.len() < IN_FLIGHT && !job.finished() {
                    // Small enough that every worker gets several batches (and a cancel waits
                    // for a few at most), large enough that messages cost little.
                    let (done, total) = job.progress();
                    let batch = (total.saturating_sub(done) / (4 * IN_FLIGHT * workers)).clamp(4, 64);
                    let items = job.hand_out(batch);
                    if items.is_empty() {
                        break;
                    }
                    if slot.started != Some(self.search) {
                        let _ = slot.worker.post_message(&JsValue::from_str(&self.start));
                        slot.started = Some(self.search);
                    }
                    let request = Request::Evaluate { search: self.search, items: items.clone() };
                    let text = serde_json::to_string(&request).unwrap_or_default();
                    let _ = slot.worker.post_message(&JsValue::from_str(&text));
                    slot.out.push_back((self.search, items));
                }
                // Busy with this search: batches of it were out before, or went out now.
                if slot.out.iter().any(|(s, _)| *s == self.search) {
                    busy += 1;
                }
            }
            busy
        })
    }

    /// Workers that can take this search's work now (loaded, alive, and it was not refused).
    pub fn workers(&self) -> usize {
        if self.local.get() {
            return 0;
        }
        POOL.with(|p| p.borrow().slots.iter().filter(|s| s.usable()).count())
    }
}

impl Drop for Offload {
    fn drop(&mut self) {
        POOL.with(|p| {
            let mut p = p.borrow_mut();
            p.wakers.remove(&self.search);
            p.inbox.retain(|(s, _)| *s != self.search);
        });
    }
}
