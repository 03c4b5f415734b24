#include "adapters.h"

#include <algorithm>
#include <sstream>

#include "attune/util/error.h"

namespace attune::recipe {

namespace {

bool is_yaml(const Recipe& recipe) { return recipe.dialect() == "yaml"; }

[[noreturn]] void bad_schedule(const Recipe& r, const Entry& e, const std::string& expected) {
  throw InputError({r.config_path(), e.line, 0}, e.path, "expected " + expected + ", got '" + e.value.str() + "'");
}

// The words of a flag's value: several value words, or one quoted string.
std::vector<std::string> value_words(const Entry& e) {
  std::vector<std::string> out;
  auto split = [&](const std::string& t) {
    std::istringstream in(t);
    for (std::string w; in >> w;) out.push_back(w);
  };
  if (e.value.kind == ValueKind::List) {
    for (const auto& v : e.value.items) split(v.str());
  } else {
    split(e.value.str());
  }
  return out;
}

std::optional<long long> whole(const std::string& w) {
  Value v = Value::parse(w);
  auto n = v.kind == ValueKind::Int ? v.as_int() : std::nullopt;
  return n && *n > 0 ? n : std::nullopt;
}

// --rampup-batch-size START INCREMENT SAMPLES: START, START+INCREMENT, ... up
// to --global-batch-size (Megatron asserts the difference is a multiple).
std::vector<long long> rampup_phases(const Recipe& r, const Entry& e, std::optional<long long> gbs) {
  std::vector<std::string> w = value_words(e);
  std::optional<long long> start = w.size() == 3 ? whole(w[0]) : std::nullopt;
  std::optional<long long> step = w.size() == 3 ? whole(w[1]) : std::nullopt;
  if (!start || !step || !whole(w[2])) bad_schedule(r, e, "three positive whole numbers: start, increment, ramp-up samples");
  if (!gbs) bad_schedule(r, e, "a --global-batch-size to ramp up to");
  if (*gbs < *start || (*gbs - *start) % *step != 0 || (*gbs - *start) / *step > 100000) {
    bad_schedule(r, e, "a start that reaches --global-batch-size " + std::to_string(*gbs) + " in whole increments");
  }
  std::vector<long long> out;
  for (long long b = *start; b <= *gbs; b += *step) out.push_back(b);
  return out;
}

// --step-batch-size-schedule "T0:BS0 T1:BS1 ...": the batch of each phase.
std::vector<long long> step_phases(const Recipe& r, const Entry& e) {
  std::vector<long long> out;
  for (const std::string& w : value_words(e)) {
    size_t colon = w.find(':');
    auto bs = colon == std::string::npos ? std::nullopt : whole(w.substr(colon + 1));
    if (!bs) bad_schedule(r, e, "THRESHOLD:BATCH pairs (0:768 250B:1536)");
    out.push_back(*bs);
  }
  if (out.empty()) bad_schedule(r, e, "THRESHOLD:BATCH pairs (0:768 250B:1536)");
  return out;
}

}  // namespace

std::string MegatronAdapter::doc_key(const Recipe& recipe, const std::string& key) const {
  if (!is_yaml(recipe)) return key;
  // Megatron's CI YAML: flags under MODEL_ARGS, environment under ENV_VARS.
  if (key.rfind("--", 0) == 0) return "MODEL_ARGS." + key;
  if (key.rfind("env.", 0) == 0) return "ENV_VARS." + key.substr(4);
  return key;
}

std::string MegatronAdapter::catalog_key(const Recipe& recipe, const std::string& path) const {
  if (!is_yaml(recipe)) return path;
  if (path.rfind("MODEL_ARGS.", 0) == 0) return path.substr(11);
  if (path.rfind("ENV_VARS.", 0) == 0) return "env." + path.substr(9);
  return path;
}

bool MegatronAdapter::written_as_absent(const Recipe& recipe, const std::string& key, const Value& value) const {
  // tests/functional_tests/shell_test_utils/_run_training.sh: `true` becomes
  // the bare flag, anything else `--flag value`; no boolean flag takes one.
  return is_yaml(recipe) && key.rfind("MODEL_ARGS.", 0) == 0 && value.kind == ValueKind::Bool &&
         !value.as_bool().value_or(true);
}

Layout MegatronAdapter::read_layout(const Recipe& recipe) const {
  Layout l = Adapter::read_layout(recipe);
  // The older spelling gives layers per virtual stage instead of stages per rank.
  auto per_stage = recipe.find("--num-layers-per-virtual-pipeline-stage");
  if (!recipe.find_named("vp") && per_stage && recipe.model() && l.pp > 0) {
    if (auto n = per_stage->value.as_int(); n && *n > 0) {
      l.vp = std::max(1, static_cast<int>(recipe.model()->layers / l.pp / *n));
    }
  }
  if (auto step = recipe.find("--step-batch-size-schedule"); step && !step->value.is_null() && !step->runtime) {
    l.batch_phases = step_phases(recipe, *step);
  } else if (auto ramp = recipe.find("--rampup-batch-size"); ramp && !ramp->value.is_null() && !ramp->runtime) {
    l.batch_phases = rampup_phases(recipe, *ramp, l.gbs);
  } else if ((step && step->runtime) || (ramp && ramp->runtime)) {
    const Entry& e = step && step->runtime ? *step : *ramp;
    l.unknown["gbs"] = e.raw;
  }
  return l;
}

std::string MegatronAdapter::recompute(const Recipe& recipe) const {
  auto g = recipe.find_named("recompute");
  if (g && !g->value.is_null()) return g->value.str();
  if (truthy(recipe.find("--recompute-activations"))) return "selective";
  return "none";
}

std::string MegatronAdapter::precision(const Recipe& recipe) const {
  std::string fp4 = value_text(recipe.find("--fp4-format"));
  if (!fp4.empty()) return "fp4-" + value_text(recipe.find("--fp4-recipe"));
  std::string fp8 = value_text(recipe.find("--fp8-format"));
  if (!fp8.empty()) {
    std::string r = value_text(recipe.find("--fp8-recipe"));
    return r.empty() || r == "delayed" ? "fp8-" + fp8 : "fp8-" + fp8 + "-" + r;
  }
  if (truthy(recipe.find("--bf16"))) return "bf16";
  if (truthy(recipe.find("--fp16"))) return "fp16";
  return "fp32";
}

std::vector<Change> MegatronAdapter::translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const {
  if (lever.name != "recompute") return Adapter::translate(recipe, lever, value);
  std::vector<Change> out = granularity_recompute(recipe, value, doc_key(recipe, "--recompute-granularity"),
                                                  doc_key(recipe, "--recompute-method"),
                                                  doc_key(recipe, "--recompute-num-layers"), std::nullopt);
  // --recompute-activations is the old spelling of selective: drop it so the
  // granularity flag alone says what is recomputed.
  std::string old_flag = doc_key(recipe, "--recompute-activations");
  if (recipe.document().find(old_flag)) out.push_back(make_change(recipe, old_flag, std::nullopt));
  return out;
}

namespace {

// Megatron-FSDP (Megatron-LM --use-megatron-fsdp, Bridge use_megatron_fsdp):
// --data-parallel-sharding-strategy optim_grads_params (the CLI default) shards
// the parameters over the DP group, split into num_distributed_optimizer_instances
// replicas (HSDP); optim and optim_grads shard only the optimizer state (and
// gradients), no_shard nothing. Torch FSDP2 always shards fully.
int megatron_family_shard(const Recipe& recipe, const Plan& p, bool megatron_fsdp, bool torch_fsdp2) {
  if (torch_fsdp2) return p.dp;
  if (!megatron_fsdp) return 0;
  std::string strategy = effective_text(recipe, "sharding");
  if (!strategy.empty() && strategy != "optim_grads_params") return 0;
  long long instances = std::max(1LL, effective_int(recipe, "num_distributed_optimizer_instances").value_or(1));
  return p.dp % instances == 0 ? static_cast<int>(p.dp / instances) : p.dp;
}

}  // namespace

int MegatronAdapter::shard_group(const Recipe& recipe, const Layout&, const Plan& p) const {
  return megatron_family_shard(recipe, p, effective_bool(recipe, "use_megatron_fsdp"),
                               effective_bool(recipe, "use_torch_fsdp2"));
}

int BridgeAdapter::shard_group(const Recipe& recipe, const Layout&, const Plan& p) const {
  // Bridge's ddp.data_parallel_sharding_strategy defaults to optim_grads_params
  // in its recipes (MCore's no_shard would make Megatron-FSDP a no-op).
  return megatron_family_shard(recipe, p, effective_bool(recipe, "use_megatron_fsdp"),
                               effective_bool(recipe, "use_torch_fsdp2"));
}

void MegatronAdapter::framework_rules(const Recipe& recipe, const Plan& p, std::vector<RuleViolation>& out) const {
  bool sp = truthy(recipe.find_named("sequence_parallel"));
  add_rule(recipe, out, !sp || p.tp > 1, "sp-needs-tp", "sequence_parallel",
           "sequence parallelism is silently disabled when tp = 1", false);
  add_rule(recipe, out, !truthy(recipe.find_named("tp_comm_overlap")) || sp, "tp-comm-overlap-needs-sp",
           "tp_comm_overlap", "--tp-comm-overlap requires --sequence-parallel");
  bool fsdp = truthy(recipe.find("--use-megatron-fsdp"));
  if (truthy(recipe.find_named("overlap_param_gather"))) {
    add_rule(recipe, out, truthy(recipe.find_named("distributed_optimizer")) || fsdp,
             "overlap-param-gather-needs-distopt", "overlap_param_gather",
             "--overlap-param-gather needs --use-distributed-optimizer (or Megatron-FSDP)");
    add_rule(recipe, out, truthy(recipe.find_named("overlap_grad_reduce")), "overlap-param-gather-needs-grad-reduce",
             "overlap_param_gather", "--overlap-param-gather needs --overlap-grad-reduce");
  }
  // TP/CP on Hopper need CUDA_DEVICE_MAX_CONNECTIONS=1 (Megatron asserts it);
  // FSDP prefers more connections, so the rule does not apply there.
  auto conn = recipe.find_named("cuda_device_max_connections");
  bool hopper = p.gpu != "b200";
  if ((p.tp > 1 || p.cp > 1) && hopper && !fsdp && conn) {
    add_rule(recipe, out, conn->value.str() == "1", "cuda-device-max-connections", "cuda_device_max_connections",
             "tp or cp > 1 on Hopper requires CUDA_DEVICE_MAX_CONNECTIONS=1, got " + conn->value.str());
  }
}

}  // namespace attune::recipe
