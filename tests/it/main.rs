//! Integration tests (one binary): golden cases of the MAD-Max reference, rejected inputs, the
//! CLI contract, and robustness under malformed input. Data lives under `tests/data/`.

mod bounds;
mod cli;
mod default_model;
mod explorer;
mod golden;
mod properties;
mod rejected;
mod robustness;
mod support;
mod tidy;
mod validation;
