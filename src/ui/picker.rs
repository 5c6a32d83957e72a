//! The scenario picker: the presets grouped (current GPUs, serving, the MAD-Max paper's runs by
//! family) and named by their GPUs, a filter above them, and the famous runs, which open their
//! stories.

use super::app::Dispatch;
use super::dom;
use super::state::{Action, State};
use crate::presets;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

pub(super) fn scenario_picker(state: &State, d: &Dispatch) -> Html {
    html! { <ScenarioPicker current={state.preset.clone()} dispatch={d.clone()} /> }
}

#[derive(Properties, PartialEq)]
struct PickerProps {
    /// The preset on screen; `None` once the scenario is edited.
    current: Option<String>,
    dispatch: Dispatch,
}

/// The prefix of a famous run's value in the scenario select (the rest is the story's id).
const STORY: &str = "story:";

/// Whether every word of `query` is in `text` (case ignored): "h100 70b" finds "LLaMA2-70B ...
/// on 128 x H100 SXM".
fn matches(text: &str, query: &str) -> bool {
    let text = text.to_lowercase();
    query.to_lowercase().split_whitespace().all(|w| text.contains(w))
}

/// The scenario select, grouped (current GPUs, serving, the paper's runs by model family), with
/// a filter above it: typing narrows the list, Enter opens the first match.
#[function_component(ScenarioPicker)]
fn scenario_picker_view(props: &PickerProps) -> Html {
    let query = use_state(String::new);
    let Ok(p) = presets::all() else { return html! { <p class="error">{ "The presets could not be read." }</p> } };
    let current = props.current.clone().unwrap_or_default();
    // The scenario on screen stays listed whatever the filter, so the select never shows a
    // scenario that is not the one loaded.
    // Each scenario in the select's order (group by group), and whether it matches the filter.
    let ordered: Vec<(&presets::ScenarioPreset, bool)> = presets::SCENARIO_GROUPS
        .iter()
        .flat_map(|g| p.scenarios.iter().filter(move |s| s.group() == *g))
        .map(|s| (s, matches(&format!("{} {} {}", s.label, s.group(), s.source), &query)))
        .collect();
    let listed: Vec<_> = ordered.iter().filter(|(s, hit)| *hit || s.id == current).map(|(s, _)| *s).collect();
    let first_match = ordered.iter().find(|(_, hit)| *hit).map(|(s, _)| s.id.clone());
    let matching = ordered.iter().filter(|(_, hit)| *hit).count();
    let group = |label: &'static str| {
        let members: Vec<_> = listed.iter().filter(|s| s.group() == label).collect();
        if members.is_empty() {
            return html! {};
        }
        html! {
            <optgroup label={label}>
                { for members.iter().map(|s| html! {
                    <option value={s.id.clone()} selected={s.id == current}>{ &s.label }</option>
                }) }
            </optgroup>
        }
    };
    let on_pick = {
        let d = props.dispatch.clone();
        Callback::from(move |e: Event| {
            let Some(s) = e.target_dyn_into::<HtmlSelectElement>() else { return };
            match s.value().strip_prefix(STORY) {
                Some(id) => dom::go_to(&format!("?view=learn#story-{id}")),
                None => d.emit(Action::LoadScenario(s.value())),
            }
        })
    };
    let on_input = {
        let query = query.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(i) = e.target_dyn_into::<HtmlInputElement>() {
                query.set(i.value());
            }
        })
    };
    let on_key = {
        let d = props.dispatch.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Enter" {
                e.prevent_default();
                if let Some(id) = first_match.clone() {
                    d.emit(Action::LoadScenario(id));
                }
            }
        })
    };
    // Famous runs: each opens its story in the library, where "Open in calculator" loads it
    // (their scenarios come from the measured runs, which the library fetches).
    let stories: Vec<_> = crate::stories::index().iter().filter(|(_, title)| matches(title, &query)).collect();
    let total = p.scenarios.len();
    let status = if query.trim().is_empty() {
        String::new()
    } else if matching == 0 {
        format!("No scenario matches \"{}\".", query.trim())
    } else {
        format!("{} of {total} scenarios match; Enter opens the first.", matching)
    };
    html! {
        <div class="card">
            <div class="field">
                <label for="scenario">{ "Scenario" }</label>
                <input type="search" id="scenario-search" class="scenario-search" value={(*query).clone()}
                    placeholder="Filter, e.g. 70B H100" aria-label="Filter the scenarios"
                    aria-describedby="scenario-matches" oninput={on_input} onkeydown={on_key} />
                <p class="help" id="scenario-matches" role="status">{ status }</p>
                <select id="scenario" onchange={on_pick}>
                    { if props.current.is_none() { html! { <option value="" selected=true>{ "Custom scenario (edited)" }</option> } } else { html! {} } }
                    { for presets::SCENARIO_GROUPS.into_iter().map(group) }
                    { if stories.is_empty() { html! {} } else { html! {
                        <optgroup label="Famous runs (opens the story)">
                            { for stories.iter().map(|(id, title)| html! { <option value={format!("{STORY}{id}")}>{ title }</option> }) }
                        </optgroup>
                    } } }
                </select>
                <p class="help">{ format!("{total} runs to start from: on current GPUs, as served, or the MAD-Max paper's own; or a famous run's story. Change anything below; every edit recomputes at once.") }</p>
            </div>
        </div>
    }
}
