//! The learn view: the lessons, each computed live, with a button that opens its scenario in
//! the calculator.

use super::app::Dispatch;
use super::lessons;
use super::state::Action;
use crate::units;
use yew::prelude::*;

pub(super) fn learn(d: &Dispatch, width: u32) -> Html {
    let ls = lessons::lessons();
    html! {
        <main class="learn">
            <nav class="learn-index" aria-label="On this page">
                <a href="#lessons-title">{ "Lessons: why plans behave as they do" }</a>
                <a href="#stories-title">{ "Famous runs: published numbers against the model" }</a>
            </nav>
            <section aria-labelledby="lessons-title">
                <h2 id="lessons-title">{ "Lessons" }</h2>
                <p class="lead">{ "Three short lessons, each a comparison of two plans computed right now in MAD-Max paper mode: the model of the paper, whose simpler accounting lets one effect stand alone. The calculator opens on the default model, which fixes the paper model's quirks and adds what it leaves out (activation memory, the optimizer step, pipeline bubbles, real collectives), so for the same plan it shows other numbers. Open either side in the calculator, in paper mode, to explore its timeline, then switch to the default model to see what changes." }</p>
                { for ls.into_iter().map(|l| lesson(l, d)) }
            </section>
            <super::stories_view::StoriesSection dispatch={d.clone()} {width} />
        </main>
    }
}

/// What the calculator says when a lesson's scenario opens in it.
const LESSON_OPENED: &str = "Opened in MAD-Max paper mode, as the lesson computed it. Switch to the default model above to see the same plan with the paper model's quirks fixed and what it leaves out added.";

fn lesson(l: lessons::Lesson, d: &Dispatch) -> Html {
    let cols = l.variants.iter().map(|v| {
        let open = {
            let d = d.clone();
            let doc = v.doc.clone();
            Callback::from(move |_| {
                d.emit(Action::LoadDoc(doc.clone()));
                d.emit(Action::Notify(LESSON_OPENED.into()));
            })
        };
        let body = match &v.report {
            Ok(r) => {
                let (t, share, a2a, mem) = lessons::figures(r);
                html! {
                    <dl class="lesson-figures">
                        <dt>{ "Iteration time" }</dt><dd>{ units::duration(t) }</dd>
                        <dt>{ "Exposed communication" }</dt><dd>{ units::percent(share) }</dd>
                        <dt>{ "All-to-all time" }</dt><dd>{ units::duration(a2a) }</dd>
                        <dt>{ "Memory per GPU" }</dt><dd>{ units::bytes(mem) }</dd>
                    </dl>
                }
            }
            Err(e) => html! { <p class="error-msg">{ e }</p> },
        };
        html! {
            <div class="variant">
                <h4>{ v.label }</h4>
                { body }
                <button onclick={open}>{ "Open in calculator (paper mode)" }</button>
            </div>
        }
    });
    html! {
        <article class="card lesson" id={format!("lesson-{}", l.id)}>
            <h3>{ l.title }</h3>
            <p>{ l.intro }</p>
            <div class="pair">{ for cols }</div>
            <p class="takeaway">{ l.takeaway }</p>
        </article>
    }
}
