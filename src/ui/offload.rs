//! The explorer's evaluations on Web Workers: the messages between the page and a worker, and
//! what a worker does with them. Plain Rust, tested natively (a test plays the workers);
//! [`serve`] is the worker's wasm entry point, `pool` the page's side.
//!
//! A worker builds its scenarios through the front door: the searched scenario's MAD-Max file,
//! validated, then the explorer's task setting and what-ifs applied as the page applies them.
//! It evaluates nothing unless they serialize exactly as the page's do, so an outcome from a
//! worker is the one the page would have computed, bit for bit: the worker reads JSON numbers
//! exactly (the `worker` feature), and sends its figures back as bit patterns.
//!
//! One job: the worker side of the explorer's offloaded evaluations.

use super::explorer::{self, Item};
use crate::engine::explore::{self, Outcome, Resource, Space};
use crate::engine::{validate, RawFile, Scenario};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the page asks a worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// A new search: forget the last one and build this one's scenarios. No answer; the next
    /// `Evaluate` says whether it worked.
    Start(Start),
    /// Evaluate these items of the search `search`.
    Evaluate { search: u64, items: Vec<Item> },
}

/// A search as a worker builds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Start {
    /// Tells the page's searches apart.
    pub search: u64,
    /// The searched scenario as a MAD-Max file (`{"model", "system", "task"}`).
    pub file: Value,
    /// The explorer's task setting ([`explorer::searched`]).
    pub task: String,
    pub space: Space,
    /// The what-ifs, in the order of [`explorer::Job::what_ifs`].
    pub what_ifs: Vec<(Resource, f64)>,
    /// The page's scenarios ([`explorer::Job::scenarios`]), serialized ([`fingerprint`]).
    pub expect: String,
}

impl Start {
    /// The start of `job`'s search, `file` being its scenario's MAD-Max file before the task
    /// setting `task` was applied.
    pub fn of(search: u64, job: &explorer::Job, file: Value, task: &str) -> Start {
        Start {
            search,
            file,
            task: task.to_owned(),
            space: job.space().clone(),
            what_ifs: job.what_ifs().to_vec(),
            expect: fingerprint(job.scenarios()),
        }
    }
}

/// What a worker answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    /// Loaded and listening: a worker's first message.
    Ready,
    /// The outcomes of the items asked for, by queue place (without their plans: the page
    /// has them).
    Done { search: u64, outcomes: Vec<(usize, Figures)> },
    /// The worker cannot serve this search, and says why; the page evaluates the items itself.
    Refused { search: u64, why: String },
}

/// An outcome's figures: all of it but the plan and settings, which the page sent.
/// Numbers travel as their bit patterns ([`bits`]): the page reads them back exactly without
/// an exact decimal parser (which would add to its download), infinities included.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    #[serde(with = "bits")]
    iteration_s: f64,
    #[serde(with = "bits")]
    throughput_samples_per_s: f64,
    global_batch: u64,
    #[serde(with = "bits")]
    exposed_share: f64,
    #[serde(with = "bits")]
    memory_bytes: f64,
    #[serde(with = "bits")]
    capacity_bytes: f64,
    #[serde(with = "bits::option")]
    tpot_s: Option<f64>,
    #[serde(with = "bits::option")]
    ttft_s: Option<f64>,
    #[serde(with = "bits::option")]
    tokens_per_s: Option<f64>,
    #[serde(with = "bits")]
    mfu: f64,
    over_tpot: bool,
    over_ttft: bool,
}

/// An f64 written as the u64 of its bits.
mod bits {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        x.to_bits().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        u64::deserialize(d).map(f64::from_bits)
    }

    /// The same for an optional f64.
    pub mod option {
        use serde::{Deserialize, Deserializer, Serialize, Serializer};

        pub fn serialize<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
            x.map(f64::to_bits).serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
            Option::<u64>::deserialize(d).map(|b| b.map(f64::from_bits))
        }
    }
}

impl Figures {
    pub fn of(o: Outcome) -> Figures {
        // Every field named: an outcome that gains one does not compile until it travels.
        let Outcome {
            plan: _,
            setup: _,
            iteration_s,
            throughput_samples_per_s,
            global_batch,
            exposed_share,
            memory_bytes,
            capacity_bytes,
            tpot_s,
            ttft_s,
            tokens_per_s,
            mfu,
            over_tpot,
            over_ttft,
        } = o;
        Figures {
            iteration_s,
            throughput_samples_per_s,
            global_batch,
            exposed_share,
            memory_bytes,
            capacity_bytes,
            tpot_s,
            ttft_s,
            tokens_per_s,
            mfu,
            over_tpot,
            over_ttft,
        }
    }

    /// The outcome of `item` with these figures.
    pub fn outcome(self, item: &Item) -> Outcome {
        let Figures {
            iteration_s,
            throughput_samples_per_s,
            global_batch,
            exposed_share,
            memory_bytes,
            capacity_bytes,
            tpot_s,
            ttft_s,
            tokens_per_s,
            mfu,
            over_tpot,
            over_ttft,
        } = self;
        Outcome {
            plan: item.candidate.plan.clone(),
            setup: item.candidate.setup.clone(),
            iteration_s,
            throughput_samples_per_s,
            global_batch,
            exposed_share,
            memory_bytes,
            capacity_bytes,
            tpot_s,
            ttft_s,
            tokens_per_s,
            mfu,
            over_tpot,
            over_ttft,
        }
    }
}

/// The scenarios of a search as text, to compare the page's with a worker's.
pub fn fingerprint(scenarios: &[Scenario]) -> String {
    serde_json::to_string(scenarios).unwrap_or_default()
}

/// A search's scenarios and space as a worker built them, or why it could not.
type Built = Result<(Vec<Scenario>, Space), String>;

/// A worker's state: the search it serves (its id and what it built).
#[derive(Default)]
pub struct Worker {
    search: Option<(u64, Built)>,
}

impl Worker {
    /// Answers one message of the page (JSON text), if it needs an answer.
    pub fn handle(&mut self, text: &str) -> Option<Reply> {
        let request = match serde_json::from_str::<Request>(text) {
            Ok(r) => r,
            // A message it cannot read: the page's search id is unknown, so it answers for none.
            Err(e) => return Some(Reply::Refused { search: 0, why: format!("unreadable request: {e}") }),
        };
        match request {
            Request::Start(start) => {
                let built = build(&start).map(|scenarios| (scenarios, start.space));
                self.search = Some((start.search, built));
                None
            }
            Request::Evaluate { search, items } => Some(self.evaluate(search, &items)),
        }
    }

    fn evaluate(&self, search: u64, items: &[Item]) -> Reply {
        let refuse = |why: &str| Reply::Refused { search, why: why.to_owned() };
        let Some((id, built)) = &self.search else { return refuse("no search started") };
        if *id != search {
            return refuse("another search started");
        }
        let (scenarios, space) = match built {
            Ok(b) => b,
            Err(why) => return refuse(why),
        };
        let mut outcomes = Vec::with_capacity(items.len());
        for it in items {
            let Some(s) = scenarios.get(it.scenario) else { return refuse("an item's scenario is not the search's") };
            outcomes.push((it.at, Figures::of(explore::evaluate_plan(s, &it.candidate, space))));
        }
        Reply::Done { search, outcomes }
    }
}

/// The scenarios of a search, built from its start as the page built them.
fn build(start: &Start) -> Result<Vec<Scenario>, String> {
    let raw = serde_json::from_value::<RawFile>(start.file.clone())
        .map_err(|e| format!("scenario file: {e}"))?
        .into_scenario()?;
    let s = validate(&raw).map_err(|errs| match errs.first() {
        Some(e) => format!("the scenario is refused: {e}"),
        None => "the scenario is refused".to_owned(),
    })?;
    let base = explorer::searched(&s, &start.task)?;
    let mut all = vec![base];
    for &(r, f) in &start.what_ifs {
        let scaled = explore::scaled(&all[0], r, f).ok_or("a what-if does not apply to the scenario")?;
        all.push(scaled);
    }
    if fingerprint(&all) != start.expect {
        return Err("the worker's scenarios differ from the page's".to_owned());
    }
    Ok(all)
}

/// The worker's entry point: answers the page's messages until the page ends it.
#[cfg(target_arch = "wasm32")]
pub fn serve() {
    use std::cell::RefCell;
    use wasm_bindgen::prelude::*;
    use wasm_bindgen::JsCast;

    let Ok(scope) = js_sys::global().dyn_into::<web_sys::DedicatedWorkerGlobalScope>() else { return };
    let worker = RefCell::new(Worker::default());
    let reply_scope = scope.clone();
    let post = move |r: &Reply| {
        if let Ok(text) = serde_json::to_string(r) {
            let _ = reply_scope.post_message(&JsValue::from_str(&text));
        }
    };
    post(&Reply::Ready);
    let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
        let text = e.data().as_string().unwrap_or_default();
        if let Some(reply) = worker.borrow_mut().handle(&text) {
            post(&reply);
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::explorer::{Baseline, Job};
    use crate::ui::state::State;

    /// The page's default scenario and its MAD-Max file.
    fn page() -> (Scenario, Value) {
        let s = State::initial();
        let good = s.good.as_ref().expect("good");
        (good.scenario.clone(), good.doc.to_json())
    }

    /// Runs `job` on `workers` simulated workers that answer out of order, every message
    /// going through JSON text as it does between the page and its workers.
    fn run_on_workers(job: &mut Job, start: &Start, workers: usize, batch: usize) {
        let mut ws: Vec<Worker> = (0..workers).map(|_| Worker::default()).collect();
        let text = serde_json::to_string(&Request::Start(start.clone())).expect("start");
        for w in &mut ws {
            assert_eq!(w.handle(&text), None);
        }
        let mut turn = 0usize;
        while !job.finished() {
            // Every worker takes a batch, then they answer last first.
            let asked: Vec<Vec<Item>> = (0..workers).map(|_| job.hand_out(batch)).collect();
            assert!(asked.iter().any(|a| !a.is_empty()), "nothing handed out before the end");
            for (i, items) in asked.into_iter().enumerate().rev() {
                if items.is_empty() {
                    continue;
                }
                let request = Request::Evaluate { search: start.search, items: items.clone() };
                let w = &mut ws[(i + turn) % workers];
                let reply = w.handle(&serde_json::to_string(&request).expect("request")).expect("a reply");
                let back: Reply = serde_json::from_str(&serde_json::to_string(&reply).expect("reply")).expect("read");
                let Reply::Done { search, outcomes } = back else { panic!("refused: {back:?}") };
                assert_eq!(search, start.search);
                for ((at, figures), item) in outcomes.into_iter().zip(&items) {
                    assert_eq!(at, item.at);
                    job.accept(at, figures.outcome(item));
                }
            }
            turn += 1;
        }
    }

    #[test]
    fn a_search_split_over_workers_equals_the_one_shot_search() {
        // The default model in training, with its settings pass, the overlap pass and the
        // co-design what-ifs: three workers answering in reverse order.
        let (base, file) = page();
        let space = explore::Space::fixed_global(&base);
        let mut job = Job::new(&base, &space, true).expect("within budget");
        let start = Start::of(7, &job, file, "as-configured");
        run_on_workers(&mut job, &start, 3, 5);
        let (done, total) = job.progress();
        assert_eq!(done, total);
        assert_eq!(job.summary(Baseline::Yours), explore::search(&base, &space).expect("within budget"));
        let mut local = Job::new(&base, &space, true).expect("within budget");
        while !local.finished() {
            local.step(50);
        }
        assert_eq!(job.codesign(), local.codesign());
        assert_eq!(job.codesign().len(), Resource::ALL.len() * explorer::FACTORS.len());
    }

    #[test]
    fn a_worker_serves_the_explorer_task_setting_and_paper_mode() {
        // Inference of the page's model in MAD-Max paper mode: the task setting is applied in
        // the worker as on the page.
        let (s, mut file) = page();
        file["task"]["mode"] = Value::from("reference");
        let reference =
            validate(&serde_json::from_value::<RawFile>(file.clone()).expect("file").into_scenario().expect("raw"))
                .expect("valid");
        assert_ne!(reference, s);
        let base = explorer::searched(&reference, "inference").expect("an inference scenario");
        let space = explore::Space::fixed_global(&base);
        let mut job = Job::new(&base, &space, false).expect("within budget");
        let start = Start::of(8, &job, file, "inference");
        run_on_workers(&mut job, &start, 2, 3);
        assert_eq!(job.summary(Baseline::Yours), explore::search(&base, &space).expect("within budget"));
    }

    #[test]
    fn a_worker_refuses_a_search_it_cannot_build_as_the_page_did() {
        let (base, file) = page();
        let space = explore::Space::fixed_global(&base);
        let mut job = Job::new(&base, &space, false).expect("within budget");
        let items = job.hand_out(2);
        let ask = |w: &mut Worker, search: u64| {
            let request = Request::Evaluate { search, items: items.clone() };
            w.handle(&serde_json::to_string(&request).expect("request"))
        };
        // Not started, or started for another search.
        let mut w = Worker::default();
        assert!(matches!(ask(&mut w, 1), Some(Reply::Refused { search: 1, .. })));
        // A file that is not the page's scenario (another HBM bandwidth).
        let mut other = file.clone();
        other["system"]["mem_bw"] = Value::from(1e12);
        let start = Start::of(1, &job, other, "as-configured");
        assert_eq!(w.handle(&serde_json::to_string(&Request::Start(start)).expect("start")), None);
        let Some(Reply::Refused { search: 1, why }) = ask(&mut w, 1) else { panic!("not refused") };
        assert!(why.contains("differ"), "{why}");
        assert!(matches!(ask(&mut w, 2), Some(Reply::Refused { search: 2, .. })));
        // A file the engine refuses, and text that is no request.
        let mut bad = file.clone();
        bad["system"]["num_devices"] = Value::from(0);
        let start = Start::of(3, &job, bad, "as-configured");
        w.handle(&serde_json::to_string(&Request::Start(start)).expect("start"));
        let Some(Reply::Refused { why, .. }) = ask(&mut w, 3) else { panic!("not refused") };
        assert!(why.starts_with("the scenario is refused"), "{why}");
        assert!(matches!(w.handle("{\"Evaluate\": 5}"), Some(Reply::Refused { search: 0, .. })));
        // The right file serves; an item naming no scenario of the search is refused.
        let start = Start::of(4, &job, file, "as-configured");
        w.handle(&serde_json::to_string(&Request::Start(start)).expect("start"));
        assert!(matches!(ask(&mut w, 4), Some(Reply::Done { search: 4, ref outcomes }) if outcomes.len() == 2));
        let mut stray = items[0].clone();
        stray.scenario = 9;
        let request = Request::Evaluate { search: 4, items: vec![stray] };
        assert!(matches!(
            w.handle(&serde_json::to_string(&request).expect("request")),
            Some(Reply::Refused { search: 4, .. })
        ));
    }
}
