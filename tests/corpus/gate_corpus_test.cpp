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

// Whether a reason's rule starts with `prefix`.
bool refused_by(const Verdict& v, const std::string& prefix) {
  return std::any_of(v.reasons.begin(), v.reasons.end(), [&](const RefusalReason& r) { return r.rule.rfind(prefix, 0) == 0; });
}

bool unattributed(const Verdict& v) { return refused_by(v, "unattributed_change"); }

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

// A line break inserted into a real launch line after the entry script leaves
// every value as it was, but the flags after it no longer reach the program.
TEST(CorpusGate, ALineBreakThatSplitsARealLaunchLineIsRefused) {
  const std::vector<fs::path> files = corpus_recipes();
  if (files.empty()) GTEST_SKIP() << "ATTUNE_CORPUS is not set (scripts/test.sh sets it to ../shared/data)";
  int scripts = 0;
  for (const fs::path& p : files) {
    if (p.extension() != ".sh") continue;
    const std::optional<recipe::Recipe> original = load(p);
    if (!original) continue;
    const std::string text = original->document().text();
    const std::size_t entry = text.find(".py ", text.find("pretrain_"));
    if (text.find("pretrain_") == std::string::npos || entry == std::string::npos) continue;
    const std::size_t eol = text.find('\n', entry);
    const std::string rest = text.substr(entry + 4, eol - entry - 4);
    if (rest.find_first_not_of(" \\") == std::string::npos) continue;  // nothing after it on this line
    ++scripts;
    std::string split = text;
    split.replace(entry + 3, 1, "\n");
    recipe::RecipeOptions o;
    o.framework = recipe::to_string(original->framework());
    const Verdict v = CorrectnessGate().check(*original, recipe::Recipe::from_text(p.string(), split, o));
    EXPECT_TRUE(unattributed(v)) << p.filename();
  }
  std::cout << scripts << " real launch lines split\n";
  EXPECT_GE(scripts, 2);
}

// `2e-5` (no dot) is a string to PyYAML and a number to OmegaConf: written
// `0.00002` it is the same number to one loader and a new value to the other,
// so every real YAML recipe's such value, re-spelled, is a change the gate sees.
TEST(CorpusGate, ARealYamlNumberRespelledSoLoadersDisagreeIsSeenAsAChange) {
  const std::vector<fs::path> files = corpus_recipes();
  if (files.empty()) GTEST_SKIP() << "ATTUNE_CORPUS is not set (scripts/test.sh sets it to ../shared/data)";
  int respelled = 0;
  for (const fs::path& p : files) {
    if (p.extension() != ".yaml" && p.extension() != ".yml") continue;
    const std::optional<recipe::Recipe> original = load(p);
    if (!original) continue;
    for (const auto& e : original->document().entries()) {
      // MANTISSAe-EXPONENT with a whole mantissa: 0.000...MANTISSA.
      const std::string& t = e.raw;
      const std::size_t at = t.find("e-");
      if (!e.loader_dependent || at == std::string::npos || at == 0 || e.end <= e.begin) continue;
      const std::string mantissa = t.substr(0, at), exponent = t.substr(at + 2);
      if (mantissa.find_first_not_of("0123456789") != std::string::npos ||
          exponent.find_first_not_of("0123456789") != std::string::npos || exponent.size() > 2)
        continue;
      const int zeros = std::stoi(exponent) - static_cast<int>(mantissa.size());
      if (zeros < 0) continue;
      const std::string fixed = "0." + std::string(static_cast<std::size_t>(zeros), '0') + mantissa;
      std::string text = original->document().text();
      const std::size_t pos = text.find(t, e.begin);
      if (pos == std::string::npos || pos >= e.end) continue;
      text.replace(pos, t.size(), fixed);
      recipe::RecipeOptions o;
      o.framework = recipe::to_string(original->framework());
      const recipe::Recipe candidate = recipe::Recipe::from_text(p.string(), text, o);
      ASSERT_TRUE(candidate.document().find(e.path)) << p.filename() << " " << e.path;
      ASSERT_TRUE(candidate.document().find(e.path)->value.same_as(e.value)) << p.filename() << " " << e.path << " " << fixed;
      const Verdict v = CorrectnessGate().check(*original, candidate);
      EXPECT_FALSE(v.changes.empty()) << p.filename() << " " << e.path << ": " << t << " -> " << fixed;
      ++respelled;
      break;  // one per recipe
    }
  }
  std::cout << respelled << " real YAML numbers re-spelled\n";
  EXPECT_GE(respelled, 5);
}

// With Axolotl's sample_packing, micro_batch_size x sequence_len is the pack:
// on every real packed recipe, a micro-batch edit whose grad accumulation
// follow-up keeps the global batch is still refused.
TEST(CorpusGate, ARealPackedAxolotlRecipeKeepsItsPackLength) {
  const std::vector<fs::path> files = corpus_recipes();
  if (files.empty()) GTEST_SKIP() << "ATTUNE_CORPUS is not set (scripts/test.sh sets it to ../shared/data)";
  int packed = 0;
  for (const fs::path& p : files) {
    const std::optional<recipe::Recipe> original = load(p);
    if (!original || original->framework() != recipe::Framework::Axolotl || original->plan().pack_tokens == 0) continue;
    const recipe::Plan plan = original->plan();
    if (plan.grad_accum % 2 != 0) continue;
    recipe::Recipe candidate = *original;
    try {
      candidate.set("mbs", std::to_string(plan.mbs * 2));
    } catch (const InputError&) {
      continue;
    }
    ASSERT_EQ(candidate.plan().gbs, plan.gbs) << p.filename();
    ++packed;
    const Verdict v = CorrectnessGate().check(*original, candidate);
    EXPECT_TRUE(refused_by(v, "invariant.pack_tokens")) << p.filename();
  }
  std::cout << packed << " real packed Axolotl recipes checked\n";
  EXPECT_GE(packed, 1);
}

// A candidate whose layout breaks a validity rule the original keeps (a micro
// batch that leaves grad accumulation fractional) is refused by the gate on
// every real recipe where one can be written, not left to fail on the cluster.
TEST(CorpusGate, ARealRecipeEditedIntoAnInvalidLayoutIsRefused) {
  const std::vector<fs::path> files = corpus_recipes();
  if (files.empty()) GTEST_SKIP() << "ATTUNE_CORPUS is not set (scripts/test.sh sets it to ../shared/data)";
  int invalid = 0;
  for (const fs::path& p : files) {
    const std::optional<recipe::Recipe> original = load(p);
    if (!original || recipe::has_errors(original->violations())) continue;
    const std::string key = original->key_of("mbs");
    if (key.empty() || !original->document().find(key)) continue;
    for (long long mbs : {3, 5, 7, 11}) {
      recipe::Recipe candidate = *original;
      try {
        candidate.document().set(key, recipe::Value::integer(mbs));
      } catch (const InputError&) {
        break;
      }
      const auto broken = candidate.violations();
      if (!std::any_of(broken.begin(), broken.end(), [](const recipe::RuleViolation& x) { return x.error; })) continue;
      ++invalid;
      const Verdict v = CorrectnessGate().check(*original, candidate);
      EXPECT_TRUE(refused_by(v, "validity.")) << p.filename() << " mbs=" << mbs;
      break;
    }
  }
  std::cout << invalid << " real recipes edited into an invalid layout\n";
  EXPECT_GE(invalid, 10);
}

}  // namespace
}  // namespace attune::gate
