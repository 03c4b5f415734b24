#include "attune/recipe/framework.h"

#include <algorithm>
#include <cctype>

namespace attune::recipe {

namespace {

bool has(const Document& doc, std::string_view path) { return doc.find(path).has_value(); }

bool has_prefix(const Document& doc, std::string_view prefix) {
  for (const auto& e : doc.entries()) {
    if (e.path.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::string value_of(const Document& doc, std::string_view path) {
  auto e = doc.find(path);
  return e ? e->value.str() : "";
}

bool has_any_flag(const Document& doc) {
  for (const auto& e : doc.entries()) {
    if (e.path.rfind("--", 0) == 0) return true;
  }
  return false;
}

Detection detect_script(const Document& doc) {
  static const char* kMegatronFlags[] = {"--micro-batch-size", "--tensor-model-parallel-size",
                                         "--num-layers", "--global-batch-size", "--seq-length"};
  int hits = 0;
  for (const char* f : kMegatronFlags) hits += has(doc, f) ? 1 : 0;
  if (hits >= 2) return {Framework::Megatron, "script", "Megatron-LM flags in a launch script"};
  if (!has_any_flag(doc)) return {std::nullopt, "", "a shell script with no training flags (launcher or sbatch script)"};
  return {std::nullopt, "", "a shell script whose flags are not Megatron-LM training arguments (launcher or sbatch script)"};
}

Detection detect_yaml(const Document& doc) {
  if (has_prefix(doc, "MODEL_ARGS.--")) return {Framework::Megatron, "yaml", "Megatron-LM MODEL_ARGS map"};
  std::string hp = detect_hyperpod_dialect(doc);
  if (!hp.empty()) return {Framework::HyperPod, hp, "HyperPod recipe (" + hp + ")"};
  if (has_prefix(doc, "step_scheduler.")) return {Framework::AutoModel, "", "NeMo AutoModel step_scheduler section"};
  if (has(doc, "micro_batch_size") || has(doc, "base_model") || has(doc, "sequence_len")) {
    return {Framework::Axolotl, "", "Axolotl top-level keys (micro_batch_size/base_model/sequence_len)"};
  }
  bool bridge_sections = has_prefix(doc, "train.") || has_prefix(doc, "ddp.") || has_prefix(doc, "comm_overlap.") ||
                         has_prefix(doc, "mixed_precision") || has_prefix(doc, "dist.");
  if (bridge_sections && (has_prefix(doc, "model.") || has_prefix(doc, "train."))) {
    return {Framework::Bridge, "", "Megatron-Bridge ConfigContainer sections (train/model/ddp)"};
  }
  return {std::nullopt, "", "a YAML file with none of the keys of a supported recipe format (launcher or cluster config?)"};
}

Detection detect_toml(const Document& doc) {
  if (has_prefix(doc, "parallelism.") || has(doc, "training.local_batch_size") || has(doc, "training.seq_len")) {
    return {Framework::Torchtitan, "toml", "torchtitan [parallelism]/[training] tables"};
  }
  return {std::nullopt, "", "a TOML file without torchtitan's [training] or [parallelism] tables"};
}

}  // namespace

std::string to_string(Framework f) {
  switch (f) {
    case Framework::Megatron: return "megatron";
    case Framework::AutoModel: return "automodel";
    case Framework::Torchtitan: return "torchtitan";
    case Framework::HyperPod: return "hyperpod";
    case Framework::Axolotl: return "axolotl";
    case Framework::Bridge: return "bridge";
  }
  return "?";
}

std::string framework_title(Framework f) {
  switch (f) {
    case Framework::Megatron: return "Megatron-LM";
    case Framework::AutoModel: return "NeMo AutoModel";
    case Framework::Torchtitan: return "torchtitan";
    case Framework::HyperPod: return "SageMaker HyperPod recipes";
    case Framework::Axolotl: return "Axolotl";
    case Framework::Bridge: return "Megatron-Bridge";
  }
  return "?";
}

std::optional<Framework> parse_framework(std::string_view name) {
  std::string n;
  for (char c : name) {
    if (c != '-' && c != '_' && c != ' ') n.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (n == "megatron" || n == "megatronlm" || n == "mcore") return Framework::Megatron;
  if (n == "automodel" || n == "nemoautomodel") return Framework::AutoModel;
  if (n == "torchtitan" || n == "titan") return Framework::Torchtitan;
  if (n == "hyperpod" || n == "sagemakerhyperpod" || n == "sagemaker") return Framework::HyperPod;
  if (n == "axolotl") return Framework::Axolotl;
  if (n == "bridge" || n == "megatronbridge" || n == "mbridge") return Framework::Bridge;
  return std::nullopt;
}

std::string detect_hyperpod_dialect(const Document& doc) {
  std::string model_type = value_of(doc, "run.model_type");
  if (model_type == "llm_finetuning_aws" || has_prefix(doc, "training_config.training_args.")) return "llmft";
  if (model_type == "hyperpod_checkpointless_nemo" ||
      (has_prefix(doc, "strategy.") && has(doc, "data.global_batch_size"))) {
    return "checkpointless";
  }
  if (model_type == "hf" || has(doc, "use_smp_model") || has(doc, "model.tensor_model_parallel_degree") ||
      has(doc, "model.train_batch_size")) {
    return "smp";
  }
  if (has(doc, "model.micro_batch_size") && has(doc, "trainer.num_nodes")) return "nemo1";
  return "";
}

Detection detect_framework(const Document& doc) {
  switch (doc.format()) {
    case Format::Script: return detect_script(doc);
    case Format::Yaml: return detect_yaml(doc);
    case Format::Toml: return detect_toml(doc);
    case Format::Command:
      return {Framework::Torchtitan, "python", "a torchtitan command line naming its config (--module/--config)"};
  }
  return {};
}

}  // namespace attune::recipe
