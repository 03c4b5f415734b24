// The gate on the real recipes of $ATTUNE_CORPUS (not in the repository):
// every bool and enum lever edit `recipe set` makes on them is accounted for
// byte by byte (never refused as an unattributed change), and on every real
// launch script the constructs the script model does not follow are refused
// with their line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "attune/gate/correctness_gate.h"
#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::gate {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> corpus_recipes() {
  std::vector<fs::path> out;
  const char* env = std::getenv("ATTUNE_CORPUS");
  if (!env || !*env || !fs::is_directory(fs::path(env) / "recipes")) return out;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(env) / "recipes")) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".sh" || ext == ".yaml" || ext == ".yml" || ext == ".toml")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<recipe::Recipe> load(const fs::path& p) {
  try {
    return recipe::Recipe::from_text(p.string(), read_file(p.string()));
  } catch (const InputError&) {
    return std::nullopt;  // not a training recipe (the corpus test lists them)
  }
}

bool unattributed(const Verdict& v) {
  return std::any_of(v.reasons.begin(), v.reasons.end(), [](const RefusalReason& r) { return r.rule == "unattributed_change"; });
}

// Another value of a bool or enum lever, "" when there is none to try.
std::string other_value(const recipe::LeverDef& l, const std::optional<recipe::Value>& now) {
  const std::string current = now ? now->str() : l.default_value;
  if (l.type == recipe::LeverType::Bool) return current == "true" ? "false" : "true";
  if (l.type != recipe::LeverType::Enum) return "";
  for (const auto& v : l.values) {
    if (v != current && v != "null") return v;
  }
  return "";
}

TEST(CorpusGate, EveryLeverEditRecipeSetMakesIsAccountedFor) {
  const std::vector<fs::path> files = corpus_recipes();
  if (files.empty()) GTEST_SKIP() << "ATTUNE_CORPUS is not set (scripts/test.sh sets it to ../shared/data)";
  const CorrectnessGate gate;
  int edits = 0;
  for (const fs::path& p : files) {
    const std::optional<recipe::Recipe> original = load(p);
    if (!original) continue;
    for (const auto& lv : original->levers()) {
      if (!lv.def->pattern.empty() || lv.def->safety != recipe::LeverSafety::Throughput) continue;
      const std::string value = other_value(*lv.def, lv.value);
      if (value.empty()) continue;
      recipe::Recipe candidate = *original;
      try {
        candidate.set(lv.def->name, value);
      } catch (const InputError&) {
        continue;  // recipe set refuses it here: nothing for the gate to judge
      }
      ++edits;
      const Verdict v = gate.check(*original, candidate);
      EXPECT_FALSE(unattributed(v)) << p.filename() << " " << lv.def->name << "=" << value << ": "
                                    << (v.reasons.empty() ? "" : v.reasons.front().message);
    }
  }
  std::cout << edits << " lever edits of the corpus checked\n";
  EXPECT_GE(edits, 100);
}

TEST(CorpusGate, ConstructsTheScriptModelDoesNotFollowAreRefusedOnEveryRealScript) {
  const std::vector<fs::path> files = corpus_recipes();
  if (files.empty()) GTEST_SKIP() << "ATTUNE_CORPUS is not set (scripts/test.sh sets it to ../shared/data)";
  const std::vector<std::string> constructs = {"ARGS[3]=--fp16", "printf -v GBS %s 128", "read GBS <<< 128",
                                               "let GBS=128",    "eval GBS=128",         "source ./overrides.sh",
                                               "set -- --fp16"};
  int scripts = 0;
  for (const fs::path& p : files) {
    if (p.extension() != ".sh") continue;
    const std::optional<recipe::Recipe> original = load(p);
    if (!original) continue;
    const std::string text = original->document().text();
    const std::size_t launch = text.find("pretrain_");
    if (launch == std::string::npos) continue;
    const std::size_t line = text.rfind('\n', launch);  // the launch line's start
    if (line == std::string::npos) continue;
    ++scripts;
    recipe::RecipeOptions o;
    o.framework = recipe::to_string(original->framework());
    for (const std::string& c : constructs) {
      std::string hostile = text;
      hostile.insert(line + 1, c + "\n");
      const recipe::Recipe candidate = recipe::Recipe::from_text(p.string(), hostile, o);
      EXPECT_TRUE(unattributed(gate::CorrectnessGate().check(*original, candidate))) << p.filename() << ": " << c;
    }
    std::string renamed = text;  // every spelling of the entry script, comments too
    for (std::size_t at = renamed.find("pretrain_"); at != std::string::npos; at = renamed.find("pretrain_", at + 1))
      renamed.replace(at, 9, "posttrain");
    const recipe::Recipe other_entry = recipe::Recipe::from_text(p.string(), renamed, o);
    EXPECT_TRUE(unattributed(gate::CorrectnessGate().check(*original, other_entry))) << p.filename() << ": entry script";
  }
  std::cout << scripts << " real launch scripts checked\n";
  EXPECT_GE(scripts, 3);
}

}  // namespace
}  // namespace attune::gate
