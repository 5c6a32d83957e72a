//! A row of the vision schema, typed: a convolutional network by name, its image size, the
//! cluster and the precision it trained in.

use super::{dense_bytes, scenario_doc, split_batch, Cluster};
use crate::accuracy::columns::{Col, Row};
use crate::engine::raw::short;
use crate::engine::scenario::Network;
use serde_json::{json, Value};

/// A row of the vision schema: one of the networks the engine builds layer by layer, trained
/// data parallel over every GPU.
#[cfg_attr(test, derive(Debug))]
pub(in crate::accuracy) struct VisionRow<'a> {
    pub(in crate::accuracy) id: &'a str,
    pub(in crate::accuracy) model: &'a str,
    /// The `network` cell, one of [`Network::ALL`]'s spellings.
    pub(in crate::accuracy) network: &'a str,
    pub(in crate::accuracy) image_size: u64,
    /// Bytes per weight and activation: 2 (fp16, automatic mixed precision) or 4 (tf32, fp32).
    pub(in crate::accuracy) bytes: u64,
    pub(in crate::accuracy) cluster: Cluster<'a>,
    pub(in crate::accuracy) global_batch: u64,
    /// The `conv_layout` cell: `nhwc` (channels last) or `nchw` (channels first).
    pub(in crate::accuracy) conv_layout: &'a str,
}

impl<'a> VisionRow<'a> {
    pub(super) fn read(r: &Row<'a>, defaults: &mut Vec<String>) -> Result<VisionRow<'a>, String> {
        let network = r.get(Col::Network);
        if !Network::ALL.iter().any(|n| n.0 == network) {
            let all: Vec<&str> = Network::ALL.iter().map(|n| n.0).collect();
            return Err(format!("network \"{}\" is not one of {}", short(network), all.join(", ")));
        }
        let bytes = dense_bytes(r)?;
        let cluster = Cluster::read(r, true)?;
        let global_batch = split_batch(r, &cluster)?;
        let conv_layout = match r.get(Col::ConvLayout) {
            "" => {
                defaults.push("conv_layout blank: nhwc (channels last: no transposes around the convolutions)".into());
                "nhwc"
            }
            cell => cell,
        };
        Ok(VisionRow {
            id: r.get(Col::Id),
            model: r.get(Col::Model),
            network,
            image_size: r.positive(Col::ImageSize)?,
            bytes,
            cluster,
            global_batch,
            conv_layout,
        })
    }

    /// The scenario: the network trained data parallel over every GPU (PyTorch DDP), its
    /// gradients reduced in buckets during the backward pass, its activations in the row's
    /// layout.
    pub(super) fn scenario(&self) -> Value {
        let n = self.cluster.n_gpus;
        let model = json!({
            "name": self.model,
            "type": "CNN",
            "network": self.network,
            "image_size": self.image_size,
            "bytes_per_nonemb_param": self.bytes,
        });
        let task = json!({
            "name": self.id,
            "type": "pretrain",
            "mode": "default",
            "mlp_parallel": ["ddp"],
            "mlp_parallel_degree": [n],
            "local_mlp_bs": self.global_batch / n,
            "overlap_grad_reduce": true,
            "conv_layout": self.conv_layout,
        });
        scenario_doc(model, self.cluster.system(self.model), task)
    }
}
