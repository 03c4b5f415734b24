#include "adapters.h"

namespace attune::recipe {

std::string BridgeAdapter::precision(const Recipe& recipe) const {
  // mixed_precision is a preset name (bf16_mixed, bf16_with_fp8_current_scaling_mixed, ...).
  std::string preset = value_text(recipe.find_named("precision"));
  if (preset.empty()) return "bf16";
  if (preset.find("nvfp4") != std::string::npos) return "nvfp4";
  if (preset.find("mxfp8") != std::string::npos) return "mxfp8";
  if (preset.find("fp8") != std::string::npos) return "fp8";
  if (preset.find("fp16") == 0) return "fp16";
  return "bf16";
}

std::vector<Change> BridgeAdapter::translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const {
  if (lever.name != "recompute") return Adapter::translate(recipe, lever, value);
  return granularity_recompute(recipe, value, "model.recompute_granularity", "model.recompute_method",
                               "model.recompute_num_layers", Value::null());
}

void BridgeAdapter::framework_rules(const Recipe& recipe, const Plan& p, std::vector<RuleViolation>& out) const {
  bool sp = truthy(recipe.find_named("sequence_parallel"));
  add_rule(recipe, out, !sp || p.tp > 1, "sp-needs-tp", "sequence_parallel",
           "sequence parallelism is silently disabled when tp = 1", false);
  add_rule(recipe, out, !truthy(recipe.find_named("tp_comm_overlap")) || sp, "tp-comm-overlap-needs-sp",
           "tp_comm_overlap", "comm_overlap.tp_comm_overlap requires model.sequence_parallel");
  if (truthy(recipe.find_named("overlap_param_gather"))) {
    add_rule(recipe, out, truthy(recipe.find_named("overlap_grad_reduce")), "overlap-param-gather-needs-grad-reduce",
             "overlap_param_gather", "ddp.overlap_param_gather needs ddp.overlap_grad_reduce");
  }
}

}  // namespace attune::recipe
