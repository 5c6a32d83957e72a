//! What each set of measured runs holds, in words the validation page lists: the sources of
//! each set with their run counts, read from the rows (so the list cannot fall behind a row
//! moving from one set to the other), and for each calibration source the choice of the default
//! model it informed. SOURCES.md gives the whole account of each.

use super::{RowResult, RunSet};

/// Why each source's runs are in the calibration set: what they informed. Keyed by the source's
/// short name as `madmax validate` prints it ([`RowResult::source`]). A test checks that every
/// shipped calibration source has an entry and that no other source has one, so a source whose
/// runs move to the calibration set needs its reason written here.
pub const CALIBRATION_WHY: [(&str, &str); 17] = [
    ("vTrain", "the shared set the model was first built against"),
    ("Korthikanti et al. 2022", "the shared set"),
    ("Narayanan et al. 2021", "the shared set"),
    ("kipply", "the shared set"),
    ("vTrain single-node ground truth: odd rows", "the host time per block was fitted on them"),
    ("vTrain single-node ground truth: even rows", "the host time per block was tested on them, then refitted with them"),
    (
        "MosaicML llm-foundry MPT training benchmarks",
        "the fused-attention speeds and kernel classes were chosen after seeing their errors",
    ),
    ("MosaicML MPT benchmarks at other sequence lengths", "as MosaicML's other MPT runs"),
    ("FlagPerf", "their stated memory led to fp32 gradients"),
    (
        "NVIDIA DeepLearningExamples PyTorch DLRM",
        "their gap on eight GPUs against one led to costing table-wise embedding sharding at the GPU with the most whole tables",
    ),
    ("NVIDIA DeepLearningExamples TensorFlow2 DLRM", "TensorFlow's code led to Horovod's launch cycle"),
    (
        "vLLM pull request #2192",
        "their missing 12-22 ms a step led to the host's time per step, taken from vidur's profile of that vLLM",
    ),
    (
        "NVIDIA FasterTransformer GPT guide: TP 8 x PP 3",
        "it led to prefilling a static batch through a pipeline in micro-batches",
    ),
    (
        "GPUStack performance lab: Qwen3 8B at 1 to 8 in flight",
        "their time per token led to costing each kernel of a CUDA graph at a small kernel's measured run",
    ),
    ("GPUStack performance lab", "these bursts of requests led to running a burst step by step"),
    (
        "SGLang's benchmark of SGLang 0.3 and vLLM 0.6",
        "they led to prefilling in steps of their own, to multi-step rounds and to spreading ShareGPT's lengths around their means",
    ),
    (
        "SGLang's benchmark of SGLang 0.3 and vLLM 0.6: vLLM's offline bursts",
        "with GPUStack's bursts, they led to running a burst step by step",
    ),
];

/// What a calibration source informed ([`CALIBRATION_WHY`]); `None` for a source without an
/// entry.
pub fn calibration_why(source: &str) -> Option<&'static str> {
    CALIBRATION_WHY.iter().find(|(name, _)| *name == source).map(|(_, why)| *why)
}

/// The sources of one set's rows, each with its number of rows, in the rows' order. A row
/// without a set (the shared set read without the shipped default) is calibration, as
/// [`super::ShippedRow::predict`] makes it.
pub fn sources_in(rows: &[RowResult], set: RunSet) -> Vec<(&str, usize)> {
    let mut out: Vec<(&str, usize)> = Vec::new();
    for r in rows.iter().filter(|r| r.set.unwrap_or(RunSet::Calibration) == set) {
        match out.iter_mut().find(|(name, _)| *name == r.source) {
            Some((_, n)) => *n += 1,
            None => out.push((&r.source, 1)),
        }
    }
    out
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::accuracy::shipped;

    #[test]
    fn every_calibration_source_says_why_and_no_other_source_does() {
        let rows = shipped();
        let calibration = sources_in(&rows, RunSet::Calibration);
        let held = sources_in(&rows, RunSet::HeldOut);
        for (name, _) in &calibration {
            assert!(calibration_why(name).is_some(), "calibration source {name:?} says nothing of why");
        }
        for (name, _) in CALIBRATION_WHY {
            assert!(calibration.iter().any(|(c, _)| *c == name), "{name:?} has a reason but no calibration rows");
            assert!(!held.iter().any(|(h, _)| *h == name), "{name:?} has held-out rows");
        }
        // Each source is in one set, so the page's two lists do not share a name.
        assert!(calibration.iter().all(|(c, _)| !held.iter().any(|(h, _)| h == c)));
        // Every row counted once.
        let counted: usize = calibration.iter().chain(&held).map(|(_, n)| n).sum();
        assert_eq!(counted, rows.len());
    }

    #[test]
    fn sources_are_listed_in_the_rows_order_with_their_counts() {
        let row =
            |source: &str, set: Option<RunSet>| RowResult { source: source.to_owned(), set, ..RowResult::default() };
        let rows = [
            row("b", Some(RunSet::HeldOut)),
            row("a", None),
            row("b", Some(RunSet::HeldOut)),
            row("c", Some(RunSet::Calibration)),
            row("a", Some(RunSet::Calibration)),
        ];
        assert_eq!(sources_in(&rows, RunSet::Calibration), [("a", 2), ("c", 1)]);
        assert_eq!(sources_in(&rows, RunSet::HeldOut), [("b", 2)]);
    }
}
