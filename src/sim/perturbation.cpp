#include "attune/sim/perturbation.h"

#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "attune/recipe/hardware.h"
#include "attune/util/error.h"
#include "attune/util/yaml_input.h"
#include "attune/util/file.h"

namespace attune::sim {

namespace {

// A number in (lo, hi]; InputError otherwise.
double number(const std::string& name, const YAML::Node& n, const std::string& key, double lo, double hi) {
  if (!n.IsScalar()) throw InputError(yaml_where(name, n), key, "expected a number");
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    throw InputError(yaml_where(name, n), key, "expected a number, got '" + n.Scalar() + "'");
  }
  if (!(v > lo && v <= hi)) {
    throw InputError(yaml_where(name, n), key,
                     fmt::format("expected a value in ({}, {}], got {}", lo, hi, n.Scalar()));
  }
  return v;
}

constexpr double kMaxFactor = 10;

struct Field {
  const char* key;
  double Perturbation::*member;
};
constexpr Field kFactors[] = {
    {"attention", &Perturbation::attention}, {"nvlink", &Perturbation::nvlink},
    {"network", &Perturbation::network},     {"alltoall", &Perturbation::alltoall},
    {"memory", &Perturbation::memory},
};
// Lever effects may be 0 (the lever gains nothing here).
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
  if (!n.IsMap()) throw InputError(yaml_where(name, n), "levers", "expected a mapping {lever: factor}");
  for (const auto& kv : n) {
    const std::string key = yaml_key(name, kv.first, "levers");
    const Field* f = find_field(kLevers, key);
    if (!f) {
      throw InputError(yaml_where(name, kv.first), "levers." + key,
                       "unknown lever effect (expected one of: " + fmt::format("{}", fmt::join(lever_effect_names(), ", ")) + ")");
    }
    p.*(f->member) = kv.second.IsScalar() && kv.second.Scalar() == "0"
                         ? 0.0
                         : number(name, kv.second, "levers." + key, 0, kMaxFactor);
  }
}

void read_stragglers(const std::string& name, const YAML::Node& n, Perturbation& p) {
  if (!n.IsMap()) throw InputError(yaml_where(name, n), "stragglers", "expected a mapping {probability, slowdown}");
  for (const auto& kv : n) {
    const std::string key = yaml_key(name, kv.first, "stragglers");
    if (key == "probability") {
      p.straggler_probability = kv.second.IsScalar() && kv.second.Scalar() == "0"
                                    ? 0.0
                                    : number(name, kv.second, "stragglers.probability", 0, 1);
    } else if (key == "slowdown") {
      p.straggler_slowdown = number(name, kv.second, "stragglers.slowdown", 0, kMaxFactor);
    } else {
      throw InputError(yaml_where(name, kv.first), "stragglers." + key, "unknown key (expected probability, slowdown)");
    }
  }
}

void read_key(const std::string& name, const std::string& key, const YAML::Node& value, Perturbation& p) {
  if (const Field* f = find_field(kFactors, key)) {
    p.*(f->member) = number(name, value, key, 0, kMaxFactor);
  } else if (key == "gemm") {
    read_gemm(name, value, p);
  } else if (key == "levers") {
    read_levers(name, value, p);
  } else if (key == "stragglers") {
    read_stragglers(name, value, p);
  } else if (key == "noise_cv") {
    p.noise_cv = value.IsScalar() && value.Scalar() == "0" ? 0.0 : number(name, value, key, 0, 0.5);
  } else {
    throw InputError(yaml_where(name, value), key,
                     "unknown key (expected gemm, attention, nvlink, network, alltoall, memory, levers, noise_cv, "
                     "stragglers)");
  }
}

}  // namespace

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
  for (const auto& kv : root) read_key(name, yaml_key(name, kv.first, "(top level)"), kv.second, p);
  return p;
}

Perturbation read_perturbation(const std::string& path) { return parse_perturbation(path, read_file(path)); }

nlohmann::json to_json(const Perturbation& p) {
  nlohmann::json j;
  j["gemm"] = p.gemm;
  if (!p.gemm_by_gpu.empty()) j["gemm_by_gpu"] = p.gemm_by_gpu;
  for (const Field& f : kFactors) j[f.key] = p.*(f.member);
  for (const Field& f : kLevers) j["levers"][f.key] = p.*(f.member);
  j["noise_cv"] = p.noise_cv;
  j["stragglers"] = {{"probability", p.straggler_probability}, {"slowdown", p.straggler_slowdown}};
  return j;
}

}  // namespace attune::sim
