#include "attune/campaign/tune_inputs.h"

#include <filesystem>

namespace attune::campaign {

namespace {

// The LLM's settings as the journal keeps them: no key, token or secret is among them.
nlohmann::json llm_inputs_json(const policy::PolicySettings& s) {
  if (!s.llm) return nullptr;
  const policy::LlmPolicySettings& l = *s.llm;
  nlohmann::json j = {{"provider", l.client.provider},  {"model", l.client.model},
                      {"base_url", l.client.base_url},  {"max_attempts", l.client.max_attempts},
                      {"max_tokens", l.max_tokens},     {"rounds_per_trial", l.rounds_per_trial},
                      {"max_faults", l.max_faults}};
  if (l.price) j["price"] = {l.price->input_per_mtok, l.price->output_per_mtok};
  return j;
}

std::optional<policy::LlmPolicySettings> read_llm_inputs(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  policy::LlmPolicySettings l;
  l.client.provider = j.at("provider").get<std::string>();
  l.client.model = j.at("model").get<std::string>();
  l.client.base_url = j.value("base_url", "");
  l.client.max_attempts = j.value("max_attempts", l.client.max_attempts);
  l.max_tokens = j.value("max_tokens", l.max_tokens);
  l.rounds_per_trial = j.value("rounds_per_trial", l.rounds_per_trial);
  l.max_faults = j.value("max_faults", l.max_faults);
  if (j.contains("price")) l.price = llm::TokenPrice{j["price"].at(0).get<double>(), j["price"].at(1).get<double>()};
  return l;
}

}  // namespace

nlohmann::json tune_inputs_json(const TuneRequest& q, std::uint64_t seed, double budget) {
  return {{"file", std::filesystem::absolute(q.file).string()},
          {"framework", q.options.framework},
          {"model", q.options.model},
          {"gpu", q.options.hardware.gpu},
          {"nodes", q.options.hardware.nodes},
          {"gpus_per_node", q.options.hardware.gpus_per_node},
          {"cluster", q.cluster},
          {"clusters_file", q.clusters_file},
          {"budget_gpu_hours", budget},
          {"policy", q.policy},
          {"max_trials", q.max_trials},
          {"parallel", q.parallel},
          {"patience", q.patience},
          {"allow", q.gate.allow},
          {"allow_keys", q.gate.allow_keys},
          {"seed", seed},
          {"lessons", q.lessons_file},
          {"use_lessons", q.use_lessons},
          {"hang_factor", q.hang_factor},
          {"startup_allowance_s", q.startup_allowance_s},
          {"llm", llm_inputs_json(q.policy_settings)},
          {"version", ATTUNE_VERSION}};
}

void read_tune_inputs(const nlohmann::json& j, TuneRequest& q) {
  q.file = j.at("file").get<std::string>();
  q.options.framework = j.value("framework", "");
  q.options.model = j.value("model", "");
  q.options.hardware.gpu = j.value("gpu", "");
  q.options.hardware.nodes = j.value("nodes", 0);
  q.options.hardware.gpus_per_node = j.value("gpus_per_node", 0);
  q.cluster = j.value("cluster", "sim");
  q.clusters_file = j.value("clusters_file", "");
  q.budget_gpu_hours = j.at("budget_gpu_hours").get<double>();
  q.policy = j.value("policy", "rules");
  q.max_trials = j.value("max_trials", 0);
  q.parallel = j.value("parallel", 1);
  q.patience = j.value("patience", 12);
  q.gate.allow = j.value("allow", std::vector<std::string>{});
  q.gate.allow_keys = j.value("allow_keys", std::vector<std::string>{});
  q.seed = j.at("seed").get<std::uint64_t>();
  q.lessons_file = j.value("lessons", "");
  q.use_lessons = j.value("use_lessons", true);
  q.hang_factor = j.value("hang_factor", 10.0);
  q.startup_allowance_s = j.value("startup_allowance_s", 900.0);
  q.policy_settings.llm = read_llm_inputs(j.value("llm", nlohmann::json()));
}

}  // namespace attune::campaign
