#include "attune/recipe/plan.h"

#include <initializer_list>

namespace attune::recipe {

bool Plan::gbs_known() const {
  return unknown.empty() || ((gbs_rule == "explicit" || gbs_rule == "schedule") && !unknown.count("gbs"));
}

std::string Plan::unknown_text() const {
  std::string out;
  for (const auto& [name, text] : unknown) out += (out.empty() ? "" : ", ") + name + "=" + text;
  return out;
}

nlohmann::json to_json(const Plan& p) {
  nlohmann::json j = {
      {"world", p.world},       {"nodes", p.nodes},
      {"gpus_per_node", p.gpus_per_node},
      {"world_source", p.world_source},
      {"tp", p.tp},             {"pp", p.pp},
      {"vp", p.vp},             {"cp", p.cp},
      {"ep", p.ep},             {"etp", p.etp},
      {"dp", p.dp},             {"dp_shard", p.dp_shard},
      {"mbs", p.mbs},           {"gbs", p.gbs},
      {"grad_accum", p.grad_accum},
      {"seq_len", p.seq_len},   {"tokens_per_step", p.tokens_per_step},
      {"gbs_rule", p.gbs_rule}, {"recompute", p.recompute},
      {"precision", p.precision},
  };
  if (!p.batch_phases.empty()) j["batch_phases"] = p.batch_phases;
  if (p.pack_tokens > 0) j["pack_tokens"] = p.pack_tokens;
  if (p.unknown.empty()) return j;
  // A number the file leaves to run time is not written as the default that
  // stands in for it, nor is anything computed from it.
  j["unknown"] = p.unknown;
  for (const auto& [name, text] : p.unknown) {
    if (j.contains(name)) j[name] = nullptr;
  }
  auto any = [&](std::initializer_list<const char*> names) {
    for (const char* n : names) {
      if (p.unknown.count(n)) return true;
    }
    return false;
  };
  if (any({"nodes", "gpus_per_node"})) j["world"] = nullptr;
  bool dp = any({"nodes", "gpus_per_node", "tp", "pp", "cp", "dp", "dp_shard", "dp_replicate"});
  if (dp) j["dp"] = j["dp_shard"] = nullptr;
  if (dp || any({"mbs", "gbs", "grad_accum"})) j["grad_accum"] = nullptr;
  if (!p.gbs_known()) j["gbs"] = nullptr;
  if (!p.gbs_known() || !p.seq_len_known()) j["tokens_per_step"] = nullptr;
  return j;
}

}  // namespace attune::recipe
