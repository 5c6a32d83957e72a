//! Every input the reference rejects (tests/data/reference/rejected.json) is rejected here too,
//! with an error naming the field and the rule. The two records of the reference's own import
//! bug (SPEC Q1) are valid inputs and must be accepted.

use crate::support::{data_dir, raw_of, read_json};
use madmax::engine::validate;

/// The field each rejection must name (the reference only raises; we say where).
const EXPECTED_FIELD: &[(&str, &str)] = &[
    ("llm_inference_on_dc_A_2048", "task.transformer_parallel_degree[0]"),
    ("llm_inference_on_zionex_2048", "task.transformer_parallel_degree[0]"),
    ("vit_inference_llm_cfg_on_cloud_A_h100_2048", "task.transformer_parallel_degree[0]"),
    ("dlrm_moe_train_on_4_per_node", "task.mlp_parallel_degree[0]"),
    ("dlrm_moe_train_on_16_per_node", "task.mlp_parallel_degree[0]"),
    ("dlrm_train_on_2048", "task.mlp_parallel_degree"),
    ("shipped_llm_moe_train_gpt4_zionex_2048", "task.local_transformer_bs"),
    ("shipped_llm_moe_train_gpt4_dc_A_2048", "task.local_transformer_bs"),
    ("shipped_llm_moe_train_llama_30b", "task.local_transformer_bs"),
    ("shipped_llm_moe_train_vit_25b", "task.local_transformer_bs"),
    ("llm_train_on_128", "task.emb_parallel_degree"),
    ("dlrm_transformer_cfg_with_dlrm_model_ok_but_dt_needs_fields", "task.transformer_parallel"),
    ("tp_then_fsdp", "task.transformer_parallel[1]"),
    ("repeat_strategy", "task.mlp_parallel[1]"),
    ("degree_one", "task.mlp_parallel_degree[1]"),
    ("three_d", "task.transformer_parallel"),
    ("hsdp_16_on_8_per_node", "task.transformer_parallel_degree[0]"),
    ("dlrm_batch_mismatch", "task.local_mlp_bs"),
    ("llm_batch_mismatch", "task.local_transformer_bs"),
    ("dlrm_all_frozen", "task.freeze_emb"),
    ("llm_all_frozen", "task.freeze_emb"),
    ("tp_with_odd_mlp_layers", "model.num_bot_mlp_layers"),
    ("single_node_ar_perc_intra_not_1", "system.ar_perc_intra"),
    ("devices_not_divisible_by_nodes", "system.num_nodes"),
    ("bad_system_type", "system.type"),
    ("bad_dense_bytes", "model.bytes_per_nonemb_param"),
    ("moe_active_gt_experts", "model.num_active_experts"),
    ("unknown_model_type", "model.type"),
    ("unknown_mlp_strategy", "task.mlp_parallel[0]"),
    ("emb_fsdp_strategy", "task.emb_parallel[0]"),
    ("unknown_task_type", "task.type"),
    ("finetune_missing_freeze_keys", "task.freeze_emb"),
    ("missing_model_file", "model"),
    ("readme_lowercase_dc_a_path", "system"),
];

#[test]
fn every_reference_rejection_is_rejected_naming_the_field() {
    let records = read_json(&data_dir().join("reference/rejected.json"));
    let records = records.as_array().expect("a list of records");
    let mut checked = 0;
    for rec in records {
        let name = rec["case"].as_str().expect("case name");
        let raw = raw_of(&serde_json::json!({ "inputs": rec["inputs"] }));
        if rec["error_type"] == "NameError" {
            // Q1: the reference fails to import its DLRM_Transformer module; the input is fine.
            assert!(validate(&raw).is_ok(), "{name}: a valid DLRM_Transformer input (Q1) was rejected");
            continue;
        }
        let errors = match validate(&raw) {
            Ok(_) => panic!("{name}: accepted an input the reference rejects"),
            Err(e) => e,
        };
        let (_, field) = EXPECTED_FIELD
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("{name}: no expected field listed in this test"));
        assert!(errors.iter().any(|e| e.field == *field), "{name}: no error names {field}; got {errors:?}");
        for e in &errors {
            assert!(!e.field.is_empty() && e.message.len() > 10, "{name}: vague error {e:?}");
        }
        // Where the reference has a message of its own (not a file path), the matching rule
        // carries it, or the message quotes it (KeyError names).
        let want = rec["error_message"].as_str().unwrap_or("");
        if !want.is_empty() && !want.starts_with("Error loading config file") {
            let e = errors.iter().find(|e| e.field == *field).expect("checked above");
            let carried = e.reference.as_deref() == Some(want) || e.message.contains(want);
            assert!(carried, "{name}: the error for {field} does not carry the reference's message {want:?}: {e:?}");
        }
        checked += 1;
    }
    assert_eq!(checked, EXPECTED_FIELD.len(), "every listed rejection was checked");
}
