#include "attune/sim/perturbation.h"

#include <charconv>
#include <cmath>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "attune/recipe/hardware.h"
#include "attune/util/error.h"
#include "attune/util/file.h"
#include "attune/util/text.h"
#include "attune/util/yaml_input.h"

namespace attune::sim {

namespace {

constexpr double kMaxFactor = 10;

// A number in [lo, hi] (or (lo, hi] when open_low); InputError otherwise.
double number(const std::string& name, const YAML::Node& n, const std::string& key, double lo, double hi,
              bool open_low = true) {
  if (!n.IsScalar()) throw InputError(yaml_where(name, n), key, "expected a number");
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    throw InputError(yaml_where(name, n), key, "expected a number, got '" + n.Scalar() + "'");
  }
  const bool low_ok = open_low ? v > lo : v >= lo;
  if (!(low_ok && v <= hi) || !std::isfinite(v)) {
    throw InputError(yaml_where(name, n), key,
                     fmt::format("expected a value in {}{}, {}], got {}", open_low ? "(" : "[", lo, hi, n.Scalar()));
  }
  return v;
}

double non_negative(const std::string& name, const YAML::Node& n, const std::string& key, double hi) {
  return number(name, n, key, 0, hi, false);
}

void expect_map(const std::string& name, const YAML::Node& n, const std::string& key, const char* what) {
  if (!n.IsMap()) throw InputError(yaml_where(name, n), key, std::string("expected a mapping ") + what);
}

[[noreturn]] void unknown(const std::string& name, const YAML::Node& at, const std::string& key, const char* expected) {
  throw InputError(yaml_where(name, at), key, std::string("unknown key (expected ") + expected + ")");
}

struct Field {
  const char* key;
  double Perturbation::*member;
};
constexpr Field kFactors[] = {
    {"attention", &Perturbation::attention}, {"nvlink", &Perturbation::nvlink},
    {"network", &Perturbation::network},     {"alltoall", &Perturbation::alltoall},
    {"memory", &Perturbation::memory},
};
constexpr Field kLevers[] = {
    {"fp8", &Perturbation::fp8},         {"tp_comm_overlap", &Perturbation::tp_comm_overlap},
    {"dp_overlap", &Perturbation::dp_overlap}, {"cuda_graphs", &Perturbation::cuda_graphs},
    {"deepep", &Perturbation::deepep},   {"recompute", &Perturbation::recompute},
};

template <std::size_t N>
const Field* find_field(const Field (&fields)[N], const std::string& key) {
  for (const Field& f : fields) {
    if (key == f.key) return &f;
  }
  return nullptr;
}

void read_gemm(const std::string& name, const YAML::Node& n, Perturbation& p) {
  if (n.IsScalar()) {
    p.gemm = number(name, n, "gemm", 0, kMaxFactor);
    return;
  }
  if (!n.IsMap()) throw InputError(yaml_where(name, n), "gemm", "expected a number or a mapping {gpu: factor}");
  for (const auto& kv : n) {
    const auto gpu_id = recipe::normalize_gpu(yaml_key(name, kv.first, "gemm"));
    if (!gpu_id) {
      throw InputError(yaml_where(name, kv.first), "gemm." + yaml_key(name, kv.first, "gemm"),
                       "unknown GPU type (expected h100, h200, b200, gb200, a100)");
    }
    p.gemm_by_gpu[*gpu_id] = number(name, kv.second, "gemm." + *gpu_id, 0, kMaxFactor);
  }
}

void read_levers(const std::string& name, const YAML::Node& n, Perturbation& p) {
  expect_map(name, n, "levers", "{lever: scale of its modelled gain}");
  for (const auto& kv : n) {
    const std::string key = yaml_key(name, kv.first, "levers");
    const Field* f = find_field(kLevers, key);
    if (!f) {
      throw InputError(yaml_where(name, kv.first), "levers." + key,
                       "unknown lever gain (expected one of: " + fmt::format("{}", fmt::join(lever_effect_names(), ", ")) +
                           "; a lever that hurts is an entry under effects:)");
    }
    p.*(f->member) = non_negative(name, kv.second, "levers." + key, kMaxFactor);
  }
}

// ---------------------------------------------------------------- conditions

std::optional<long long> integer(std::string_view t) {
  long long v = 0;
  const char* end = t.data() + t.size();
  const auto r = std::from_chars(t.data(), end, v);
  if (t.empty() || r.ec != std::errc() || r.ptr != end) return std::nullopt;
  return v;
}

bool is_bool_property(Property p) {
  switch (p) {
    case Property::SequenceParallel: case Property::DistributedOptimizer: case Property::ReshardAfterForward:
    case Property::Fp8: case Property::Offload: case Property::CrossNodeDp: case Property::Moe:
      return true;
    default:
      return false;
  }
}

std::string expected_values(Property p) {
  if (is_choice(p)) return fmt::format("{}", fmt::join(choice_values(static_cast<Choice>(p)), ", "));
  if (p == Property::Recompute) return "none, selective, full";
  if (is_bool_property(p)) return "true, false";
  return "an integer, a list of them, or a comparison such as '>1' or '<=4'";
}

// One value of a condition: a choice's value name, recompute's granularity,
// true/false, an integer, or a comparison (">1", ">=4", "<8", "<=2").
Condition::Range condition_range(const std::string& name, const YAML::Node& n, const std::string& key, Property p) {
  if (!n.IsScalar()) throw InputError(yaml_where(name, n), key, "expected " + expected_values(p));
  const std::string text = to_lower(trim(n.Scalar()));
  auto single = [](long long v) { return Condition::Range{v, v}; };
  if (is_choice(p)) {
    if (auto v = choice_value(static_cast<Choice>(p), text)) return single(*v);
  } else if (p == Property::Recompute) {
    if (text == "none") return single(0);
    if (text == "selective") return single(1);
    if (text == "full") return single(2);
  } else if (is_bool_property(p)) {
    if (text == "true") return single(1);
    if (text == "false") return single(0);
  } else {
    std::string_view t = text;
    std::string op;
    while (!t.empty() && (t.front() == '<' || t.front() == '>' || t.front() == '=')) {
      op += t.front();
      t.remove_prefix(1);
    }
    if (const auto v = integer(trim(t))) {
      constexpr long long kMax = 1LL << 60;
      if (op.empty() || op == "=" || op == "==") return single(*v);
      if (op == ">") return {*v + 1, kMax};
      if (op == ">=") return {*v, kMax};
      if (op == "<") return {-kMax, *v - 1};
      if (op == "<=") return {-kMax, *v};
    }
  }
  throw InputError(yaml_where(name, n), key, "expected " + expected_values(p) + ", got '" + n.Scalar() + "'");
}

Condition read_condition(const std::string& name, const YAML::Node& key_node, const YAML::Node& value,
                         const std::string& prefix) {
  const std::string key = yaml_key(name, key_node, prefix);
  const auto p = property_by_name(key);
  if (!p) {
    throw InputError(yaml_where(name, key_node), prefix + "." + key,
                     "unknown lever or property (expected a choice such as cuda_graphs or nccl_proto, a lever such as "
                     "tp_comm_overlap or recompute, or a layout property such as tp, ep_nodes or nodes; "
                     "docs/scenarios.md lists them)");
  }
  Condition c;
  c.property = *p;
  if (value.IsSequence()) {
    for (const auto& v : value) c.ranges.push_back(condition_range(name, v, prefix + "." + key, *p));
    if (c.ranges.empty()) throw InputError(yaml_where(name, value), prefix + "." + key, "expected at least one value");
  } else {
    c.ranges.push_back(condition_range(name, value, prefix + "." + key, *p));
  }
  return c;
}

std::vector<Condition> read_when(const std::string& name, const YAML::Node& n, const std::string& key) {
  expect_map(name, n, key, "{lever or property: value}");
  std::vector<Condition> out;
  for (const auto& kv : n) out.push_back(read_condition(name, kv.first, kv.second, key));
  return out;
}

// `lever: X` with `value: V` is the first condition of an entry.
void read_lever_value(const std::string& name, const YAML::Node& entry, const std::string& key,
                      std::vector<Condition>& when) {
  const YAML::Node lever = entry["lever"];
  const YAML::Node value = entry["value"];
  if (!lever && !value) return;
  if (!lever || !value)
    throw InputError(yaml_where(name, lever ? lever : value), key, "lever and value go together");
  when.insert(when.begin(), read_condition(name, lever, value, key));
}

// ---------------------------------------------------------------- effects and failures

Effect read_effect(const std::string& name, const YAML::Node& n, const std::string& key) {
  expect_map(name, n, key, "{lever, value, when, term, factor, why}");
  Effect e;
  e.line = n.Mark().line + 1;
  bool has_term = false, has_factor = false;
  for (const auto& kv : n) {
    const std::string k = yaml_key(name, kv.first, key);
    if (k == "lever" || k == "value") continue;
    if (k == "when") {
      auto when = read_when(name, kv.second, key + ".when");
      e.when.insert(e.when.end(), when.begin(), when.end());
    } else if (k == "term") {
      const auto t = term_by_name(to_lower(yaml_scalar(name, kv.second, key + ".term")));
      if (!t)
        throw InputError(yaml_where(name, kv.second), key + ".term",
                         fmt::format("unknown term (expected one of: {})", fmt::join(term_names(), ", ")));
      e.term = *t;
      has_term = true;
    } else if (k == "factor") {
      e.factor = number(name, kv.second, key + ".factor", 0, 1000);
      has_factor = true;
    } else if (k == "why") {
      e.why = yaml_scalar(name, kv.second, key + ".why");
    } else {
      unknown(name, kv.first, key + "." + k, "lever, value, when, term, factor, why");
    }
  }
  read_lever_value(name, n, key, e.when);
  if (!has_term) throw InputError(yaml_where(name, n), key + ".term", "missing: the part of the step it multiplies");
  if (!has_factor) throw InputError(yaml_where(name, n), key + ".factor", "missing: what it multiplies the part by");
  std::size_t choices = 0;
  for (const auto& c : e.when) choices += is_choice(c.property);
  if (choices > 4) throw InputError(yaml_where(name, n), key + ".when", "at most four choice conditions per effect");
  return e;
}

std::optional<FailureKind> failure_kind_by_name(std::string_view s) {
  for (auto k : {FailureKind::ImportError, FailureKind::InvalidArgument, FailureKind::Hang, FailureKind::NcclTimeout,
                 FailureKind::NcclError, FailureKind::IllegalMemoryAccess}) {
    if (failure_kind_name(k) == s) return k;
  }
  return std::nullopt;
}

FailureRule read_failure(const std::string& name, const YAML::Node& n, const std::string& key) {
  expect_map(name, n, key, "{lever, value, when, kind, at_step, message, why}");
  FailureRule f;
  f.line = n.Mark().line + 1;
  bool has_kind = false;
  for (const auto& kv : n) {
    const std::string k = yaml_key(name, kv.first, key);
    if (k == "lever" || k == "value") continue;
    if (k == "when") {
      auto when = read_when(name, kv.second, key + ".when");
      f.when.insert(f.when.end(), when.begin(), when.end());
    } else if (k == "kind") {
      const auto kind = failure_kind_by_name(to_lower(yaml_scalar(name, kv.second, key + ".kind")));
      if (!kind)
        throw InputError(yaml_where(name, kv.second), key + ".kind",
                         "unknown failure kind (expected import_error, invalid_argument, hang, nccl_timeout, nccl_error, "
                         "illegal_memory_access)");
      f.kind = *kind;
      has_kind = true;
    } else if (k == "at_step") {
      f.at_step = static_cast<int>(number(name, kv.second, key + ".at_step", 0, 100000));
    } else if (k == "message") {
      f.message = yaml_scalar(name, kv.second, key + ".message");
    } else if (k == "why") {
      f.why = yaml_scalar(name, kv.second, key + ".why");
    } else {
      unknown(name, kv.first, key + "." + k, "lever, value, when, kind, at_step, message, why");
    }
  }
  read_lever_value(name, n, key, f.when);
  if (!has_kind) throw InputError(yaml_where(name, n), key + ".kind", "missing: how the run fails");
  std::size_t choices = 0;
  for (const auto& c : f.when) choices += is_choice(c.property);
  if (choices > 4) throw InputError(yaml_where(name, n), key + ".when", "at most four choice conditions per failure");
  return f;
}

template <typename T, typename Read>
std::vector<T> read_list(const std::string& name, const YAML::Node& n, const std::string& key, Read read) {
  if (!n.IsSequence()) throw InputError(yaml_where(name, n), key, "expected a list");
  std::vector<T> out;
  int i = 0;
  for (const auto& e : n) out.push_back(read(name, e, fmt::format("{}[{}]", key, i++)));
  return out;
}

// ---------------------------------------------------------------- noise

void read_pair(const std::string& name, const YAML::Node& n, const std::string& key, double& probability,
               double& slowdown) {
  expect_map(name, n, key, "{probability, slowdown}");
  for (const auto& kv : n) {
    const std::string k = yaml_key(name, kv.first, key);
    if (k == "probability") probability = non_negative(name, kv.second, key + ".probability", 1);
    else if (k == "slowdown") slowdown = number(name, kv.second, key + ".slowdown", 1, kMaxFactor, false);
    else unknown(name, kv.first, key + "." + k, "probability, slowdown");
  }
}

void read_noise(const std::string& name, const YAML::Node& n, NoiseModel& noise) {
  expect_map(name, n, "noise", "of noise settings");
  for (const auto& kv : n) {
    const std::string k = yaml_key(name, kv.first, "noise");
    const std::string key = "noise." + k;
    if (k == "run_cv") noise.run_cv = non_negative(name, kv.second, key, 0.5);
    else if (k == "per_node_doubling_cv") noise.per_node_doubling_cv = non_negative(name, kv.second, key, 0.5);
    else if (k == "cross_node_cv") noise.cross_node_cv = non_negative(name, kv.second, key, 1);
    else if (k == "step_cv") noise.step_cv = non_negative(name, kv.second, key, 0.5);
    else if (k == "slow_node") read_pair(name, kv.second, key, noise.slow_node_probability, noise.slow_node_slowdown);
    else if (k == "stragglers") read_pair(name, kv.second, key, noise.straggler_probability, noise.straggler_slowdown);
    else if (k == "node_failure_per_node_hour") noise.node_failure_per_node_hour = non_negative(name, kv.second, key, 1);
    else
      unknown(name, kv.first, key,
              "run_cv, per_node_doubling_cv, cross_node_cv, step_cv, slow_node, stragglers, node_failure_per_node_hour");
  }
}

void read_key(const std::string& name, const std::string& key, const YAML::Node& key_node, const YAML::Node& value,
              Perturbation& p) {
  if (const Field* f = find_field(kFactors, key)) {
    p.*(f->member) = number(name, value, key, 0, kMaxFactor);
  } else if (key == "gemm") {
    read_gemm(name, value, p);
  } else if (key == "levers") {
    read_levers(name, value, p);
  } else if (key == "effects") {
    p.effects = read_list<Effect>(name, value, key, read_effect);
  } else if (key == "failures") {
    p.failures = read_list<FailureRule>(name, value, key, read_failure);
  } else if (key == "memory_risk") {
    p.memory_risk = non_negative(name, value, key, 0.2);
  } else if (key == "startup") {
    p.startup = number(name, value, key, 0, kMaxFactor);
  } else if (key == "noise") {
    read_noise(name, value, p.noise);
  } else if (key == "seed") {
    p.seed = static_cast<std::uint64_t>(number(name, value, key, 0, 9e15, false));
  } else {
    unknown(name, key_node, key,
            "gemm, attention, nvlink, network, alltoall, memory, levers, effects, failures, memory_risk, startup, noise, "
            "seed");
  }
}

}  // namespace

std::string_view failure_kind_name(FailureKind k) {
  switch (k) {
    case FailureKind::ImportError: return "import_error";
    case FailureKind::InvalidArgument: return "invalid_argument";
    case FailureKind::Hang: return "hang";
    case FailureKind::NcclTimeout: return "nccl_timeout";
    case FailureKind::NcclError: return "nccl_error";
    case FailureKind::IllegalMemoryAccess: return "illegal_memory_access";
  }
  return "";
}

double Perturbation::gemm_for(const std::string& gpu) const {
  const auto it = gemm_by_gpu.find(gpu);
  return it != gemm_by_gpu.end() ? it->second : gemm;
}

const std::vector<std::string>& lever_effect_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Field& f : kLevers) v.emplace_back(f.key);
    return v;
  }();
  return names;
}

Perturbation parse_perturbation(const std::string& name, const std::string& yaml_text) {
  const YAML::Node root = load_yaml(name, yaml_text);
  Perturbation p;
  if (root.IsNull()) return p;  // an empty file: nominal
  if (!root.IsMap()) throw InputError({name, 1, 1}, "", "expected a mapping of factors");
  for (const auto& kv : root) read_key(name, yaml_key(name, kv.first, "(top level)"), kv.first, kv.second, p);
  return p;
}

Perturbation read_perturbation(const std::string& path) { return parse_perturbation(path, read_file(path)); }

namespace {

nlohmann::json conditions_json(const std::vector<Condition>& when) {
  nlohmann::json j = nlohmann::json::object();
  for (const Condition& c : when) {
    nlohmann::json ranges = nlohmann::json::array();
    for (const auto& r : c.ranges) ranges.push_back(r.lo == r.hi ? nlohmann::json(r.lo) : nlohmann::json({r.lo, r.hi}));
    j[std::string(property_name(c.property))] = ranges;
  }
  return j;
}

}  // namespace

nlohmann::json to_json(const Perturbation& p) {
  nlohmann::json j;
  j["gemm"] = p.gemm;
  if (!p.gemm_by_gpu.empty()) j["gemm_by_gpu"] = p.gemm_by_gpu;
  for (const Field& f : kFactors) j[f.key] = p.*(f.member);
  for (const Field& f : kLevers) j["levers"][f.key] = p.*(f.member);
  j["effects"] = nlohmann::json::array();
  for (const Effect& e : p.effects)
    j["effects"].push_back({{"term", term_name(e.term)}, {"factor", e.factor}, {"when", conditions_json(e.when)}, {"why", e.why}});
  j["failures"] = nlohmann::json::array();
  for (const FailureRule& f : p.failures)
    j["failures"].push_back({{"kind", failure_kind_name(f.kind)}, {"at_step", f.at_step}, {"when", conditions_json(f.when)},
                             {"message", f.message}, {"why", f.why}});
  j["memory_risk"] = p.memory_risk;
  j["startup"] = p.startup;
  const NoiseModel& n = p.noise;
  j["noise"] = {{"run_cv", n.run_cv},
                {"per_node_doubling_cv", n.per_node_doubling_cv},
                {"cross_node_cv", n.cross_node_cv},
                {"step_cv", n.step_cv},
                {"slow_node", {{"probability", n.slow_node_probability}, {"slowdown", n.slow_node_slowdown}}},
                {"stragglers", {{"probability", n.straggler_probability}, {"slowdown", n.straggler_slowdown}}},
                {"node_failure_per_node_hour", n.node_failure_per_node_hour}};
  j["seed"] = p.seed;
  return j;
}

}  // namespace attune::sim
