//! The measured runs that ship with madmax: the CSVs compiled into the CLI and the tests, the
//! file names the page fetches them by, and their rows read but not yet predicted.

use super::columns::{Col, Columns, Row};
use super::csv::Records;
use super::{row_result, RowResult, RunSet};

/// The published measured training runs that ship with madmax (a copy of the shared set).
#[cfg(not(target_arch = "wasm32"))]
pub const TRAINING_CSV: &str = include_str!("../presets/data/validation/training.csv");
/// Published measured training runs madmax added to the shared set (vTrain's single-node runs,
/// MosaicML's MPT benchmarks, BLOOM 176B, MT-NLG 530B): the schema of [`TRAINING_CSV`] plus an
/// `attention` column and a `set` column that says which set each row belongs to ([`RunSet`]).
/// SOURCES.md section 5 says which choices each calibration row informed.
#[cfg(not(target_arch = "wasm32"))]
pub const ADDED_CSV: &str = include_str!("../presets/data/validation/added.csv");

/// The published measured serving runs that ship with madmax (a copy of the shared set).
#[cfg(not(target_arch = "wasm32"))]
pub const INFERENCE_CSV: &str = include_str!("../presets/data/validation/inference.csv");
/// Published measured serving runs madmax added: the schema of [`INFERENCE_CSV`] plus a `set`
/// column and the engine's `cuda_graphs` and `custom_all_reduce` (SOURCES.md section 6).
#[cfg(not(target_arch = "wasm32"))]
pub const ADDED_INFERENCE_CSV: &str = include_str!("../presets/data/validation/added_inference.csv");

/// Published measured training runs of recommendation models madmax added: NVIDIA's DLRM on
/// A100s, in PyTorch and in TensorFlow 2 (SOURCES.md section 7). Their schema names a DLRM's MLP
/// widths and tables instead of a transformer's, and has the `set` column.
#[cfg(not(target_arch = "wasm32"))]
pub const RECOMMENDATION_CSV: &str = include_str!("../presets/data/validation/recommendation.csv");

/// Published measured training runs of convolutional networks madmax added: NVIDIA's ResNet-50
/// v1.5 in PyTorch on A100s and V100s (SOURCES.md section 8). Their schema names the network and
/// its image size, and has the `set` column.
#[cfg(not(target_arch = "wasm32"))]
pub const VISION_CSV: &str = include_str!("../presets/data/validation/vision.csv");

/// Every shipped row, training then serving, predicted now, each with its set.
#[cfg(not(target_arch = "wasm32"))]
pub fn shipped() -> Vec<RowResult> {
    shipped_rows().iter().map(ShippedRow::predict).collect()
}

/// The shipped row `id`, predicted now (and no other).
#[cfg(not(target_arch = "wasm32"))]
pub fn shipped_row(id: &str) -> Option<RowResult> {
    shipped_rows().into_iter().find(|r| r.id() == id).map(|r| r.predict())
}

/// A shipped row read but not yet predicted, so that the page can predict the rows a few at a
/// time ([`shipped`] predicts them all).
#[derive(Clone, Debug, PartialEq)]
pub struct ShippedRow {
    columns: std::rc::Rc<Columns>,
    cells: Vec<String>,
}

impl ShippedRow {
    pub fn id(&self) -> &str {
        Row { columns: &self.columns, cells: &self.cells }.get(Col::Id)
    }

    /// The row's prediction; a shipped row without a `set` cell (the shared set's) is
    /// calibration.
    pub fn predict(&self) -> RowResult {
        let r = row_result(&Row { columns: &self.columns, cells: &self.cells });
        RowResult { set: r.set.or(Some(RunSet::Calibration)), ..r }
    }
}

/// The shipped CSVs' file names, in the order their rows are listed. The CLI and the tests
/// embed the files ([`shipped_rows`]); the page fetches them by these names from beside
/// itself when a view first needs them (`ui::fetched`), which keeps 40 KB (gzip) of text out of
/// its WebAssembly.
pub const SHIPPED_FILES: [&str; 6] =
    ["training.csv", "added.csv", "recommendation.csv", "vision.csv", "inference.csv", "added_inference.csv"];

/// Every shipped row in the order of [`shipped`], read from the embedded CSVs.
#[cfg(not(target_arch = "wasm32"))]
pub fn shipped_rows() -> Vec<ShippedRow> {
    rows_of(&[TRAINING_CSV, ADDED_CSV, RECOMMENDATION_CSV, VISION_CSV, INFERENCE_CSV, ADDED_INFERENCE_CSV])
}

/// The rows of CSVs of measured runs (the shipped ones: the texts of [`SHIPPED_FILES`], in that
/// order), read but not predicted. A file whose header names a column madmax does not read is
/// left out: no shipped file does (a test reads every one with [`Columns::of`]).
pub fn rows_of(csvs: &[&str]) -> Vec<ShippedRow> {
    let mut out = Vec::new();
    for csv in csvs {
        let mut records = Records::new(csv);
        let Some(Ok(columns)) = records.next().map(|h| Columns::of(&h)) else { continue };
        let columns = std::rc::Rc::new(columns);
        out.extend(records.map(|cells| ShippedRow { columns: columns.clone(), cells }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_file_names_only_columns_madmax_reads() {
        let files = [TRAINING_CSV, ADDED_CSV, RECOMMENDATION_CSV, VISION_CSV, INFERENCE_CSV, ADDED_INFERENCE_CSV];
        for (name, csv) in SHIPPED_FILES.iter().zip(files) {
            let header = Records::new(csv).next().expect("a header");
            assert!(Columns::of(&header).is_ok(), "{name}: {:?}", Columns::of(&header).err());
        }
        // So no file is left out of the rows.
        assert_eq!(shipped_rows().len(), shipped().len());
    }
}
