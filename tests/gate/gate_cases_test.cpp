// Runs the gate's case corpus (tests/gate/cases/*.yaml): each case is an
// original recipe, a candidate (raw key edits, lever edits through the recipe
// layer, or a whole file) and the expected verdict with the expected rule id.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>

#include <yaml-cpp/yaml.h>

#include "attune/gate/correctness_gate.h"
#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::gate {
namespace {

namespace fs = std::filesystem;

struct CaseResult {
  std::string verdict;  // allow | refuse | error
  std::string detail;
  Verdict v;
};

recipe::RecipeOptions read_options(const YAML::Node& n, recipe::RecipeOptions o) {
  if (!n) return o;
  if (n["framework"]) o.framework = n["framework"].as<std::string>();
  if (n["model"]) o.model = n["model"].as<std::string>();
  if (n["gpu"]) o.hardware.gpu = n["gpu"].as<std::string>();
  if (n["nodes"]) o.hardware.nodes = n["nodes"].as<int>();
  if (n["gpus_per_node"]) o.hardware.gpus_per_node = n["gpus_per_node"].as<int>();
  return o;
}

std::vector<std::string> strings(const YAML::Node& n) {
  std::vector<std::string> out;
  if (n) {
    for (const auto& x : n) out.push_back(x.as<std::string>());
  }
  return out;
}

std::string doc_path(const recipe::Recipe& r, std::string key) {
  while (!key.empty() && key[0] == '+') key.erase(0, 1);
  if (key.rfind("recipes.", 0) == 0) key.erase(0, 8);
  return r.document().find(key) ? key : r.adapter().doc_key(r, key);
}

recipe::Recipe make_candidate(const recipe::Recipe& original, const YAML::Node& c, const fs::path& dir,
                              const recipe::RecipeOptions& options) {
  recipe::RecipeOptions forced = options;
  forced.framework = recipe::to_string(original.framework());
  if (c["candidate"]) return recipe::Recipe::load((dir / c["candidate"].as<std::string>()).string(), forced);
  if (c["candidate_text"]) {
    std::string name = "candidate" + fs::path(original.config_path()).extension().string();
    return recipe::Recipe::from_text(name, c["candidate_text"].as<std::string>(), forced);
  }
  recipe::Recipe cand = original;
  for (const auto& kv : c["edit"]) {
    std::string path = doc_path(cand, kv.first.as<std::string>());
    if (kv.second.IsSequence()) {
      std::vector<recipe::Value> items;
      for (const auto& it : kv.second) items.push_back(recipe::Value::parse(it.as<std::string>()));
      cand.document().set(path, recipe::Value::list(items));
    } else if (kv.second.IsNull() || kv.second.as<std::string>() == "null" || kv.second.as<std::string>() == "~") {
      cand.document().remove(path);
    } else {
      cand.document().set(path, recipe::Value::parse(kv.second.as<std::string>()));
    }
  }
  for (const auto& kv : c["lever"]) cand.set(kv.first.as<std::string>(), kv.second.as<std::string>());
  return cand;
}

CaseResult run_case(const YAML::Node& c, const fs::path& dir, const std::string& default_base,
                    const recipe::RecipeOptions& default_options) {
  CaseResult out;
  try {
    recipe::RecipeOptions options = read_options(c["options"], default_options);
    std::string base = c["base"] ? (dir / c["base"].as<std::string>()).string() : default_base;
    recipe::Recipe original = recipe::Recipe::load(base, options);
    recipe::Recipe candidate = make_candidate(original, c, dir, options);
    GateOptions g;
    g.allow = strings(c["allow"]);
    g.allow_keys = strings(c["allow_keys"]);
    g.unknown_keys_parity = c["unknown_keys"] && c["unknown_keys"].as<std::string>() == "parity";
    out.v = CorrectnessGate(g).check(original, candidate);
    out.verdict = out.v.allowed ? "allow" : "refuse";
    for (const auto& r : out.v.reasons) out.detail += "\n      " + r.rule + " " + r.key + ": " + r.message;
  } catch (const InputError& e) {
    out.verdict = "error";
    out.detail = e.what();
  }
  return out;
}

bool has_rule(const Verdict& v, const std::string& rule) {
  for (const auto& r : v.reasons) {
    if (r.rule == rule) return true;
  }
  return false;
}

TEST(GateCases, CorpusMatchesExpectedVerdicts) {
  fs::path cases_dir = fs::path(ATTUNE_SOURCE_DIR) / "tests/gate/cases";
  if (!fs::is_directory(cases_dir)) GTEST_SKIP() << "no case corpus";
  std::map<std::string, int> by_expect, by_framework;
  int total = 0, failures = 0, false_refusals = 0, allow_cases = 0;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(cases_dir)) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    YAML::Node root;
    try {
      root = YAML::LoadFile(file.string());
    } catch (const YAML::Exception& e) {
      ADD_FAILURE() << file.filename() << ": " << e.what();
      continue;
    }
    fs::path dir = file.parent_path();
    std::string base = root["base"] ? (dir / root["base"].as<std::string>()).string() : "";
    recipe::RecipeOptions options = read_options(root["options"], {});
    for (const auto& c : root["cases"]) {
      std::string name = file.filename().string() + ":" + c["name"].as<std::string>();
      std::string expect = c["expect"].as<std::string>();
      ++total;
      ++by_expect[expect];
      ++by_framework[root["framework"] ? root["framework"].as<std::string>() : "?"];
      CaseResult r;
      try {
        r = run_case(c, dir, base, options);
      } catch (const YAML::Exception& e) {
        r.verdict = "malformed case";
        r.detail = std::string(": ") + e.what();
      }
      bool ok = r.verdict == expect;
      if (ok && expect == "refuse" && c["rule"]) ok = has_rule(r.v, c["rule"].as<std::string>());
      if (ok && c["parity"] && c["parity"].as<bool>()) ok = r.v.requires_parity;
      if (expect == "allow") {
        ++allow_cases;
        if (r.verdict == "refuse") ++false_refusals;
      }
      if (!ok) {
        ++failures;
        ADD_FAILURE() << name << ": expected " << expect << (c["rule"] ? " (" + c["rule"].as<std::string>() + ")" : "")
                      << ", got " << r.verdict << r.detail;
      }
    }
  }
  std::cout << total << " gate cases, " << failures << " failing; expected verdicts:";
  for (const auto& [k, n] : by_expect) std::cout << " " << k << "=" << n;
  std::cout << "; per framework:";
  for (const auto& [k, n] : by_framework) std::cout << " " << k << "=" << n;
  std::cout << "\nfalse refusals: " << false_refusals << " of " << allow_cases << " allow cases\n";
  EXPECT_GE(total, 250);
}

}  // namespace
}  // namespace attune::gate
