// Corpus test: every file under $ATTUNE_CORPUS/recipes (real third-party
// recipes, not in the repository). Each recipe must load, give a plan,
// save byte-identically without edits, and change exactly one line when its
// micro batch is edited. Files that are not recipes (sbatch scripts, CSV
// tables, launcher config) are listed with the reason, not failed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "attune/recipe/recipe.h"
#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::recipe {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

int changed_line_count(const std::string& a, const std::string& b, std::string* last_changed) {
  auto x = lines_of(a), y = lines_of(b);
  if (x.size() != y.size()) return -1;
  int n = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] != y[i]) {
      ++n;
      *last_changed = y[i];
    }
  }
  return n;
}

std::string corpus_dir() {
  const char* env = std::getenv("ATTUNE_CORPUS");
  if (!env || !*env) return "";
  fs::path p = fs::path(env) / "recipes";
  return fs::is_directory(p) ? p.string() : "";
}

std::vector<fs::path> corpus_files(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().filename() != "SOURCES.md") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string non_recipe_reason(const fs::path& p) {
  std::string ext = p.extension().string();
  if (ext == ".csv") return "a CSV table of layouts, not a recipe file";
  if (ext == ".md") return "documentation";
  return "";
}

void check_micro_batch_edit(const Recipe& r, const std::string& name) {
  std::string key = r.key_of("mbs");
  auto e = r.document().find(key);
  if (!e || !e->value.as_int()) return;
  auto doc = r.document().clone();
  long long next = *e->value.as_int() + 1;
  doc->set(key, Value::integer(next));
  std::string changed;
  EXPECT_EQ(changed_line_count(r.document().text(), doc->text(), &changed), 1) << name << " key " << key;
  EXPECT_NE(changed.find(std::to_string(next)), std::string::npos) << name << ": " << changed;
  auto again = doc->find(key);
  ASSERT_TRUE(again) << name;
  EXPECT_EQ(again->value.as_int(), next) << name;
}

TEST(Corpus, EveryRecipeLoadsPlansAndRoundTrips) {
  std::string dir = corpus_dir();
  if (dir.empty()) GTEST_SKIP() << "ATTUNE_CORPUS is not set (scripts/test.sh sets it to ../shared/data)";
  int recipes = 0;
  std::vector<std::string> others;
  for (const auto& path : corpus_files(dir)) {
    std::string name = fs::relative(path, dir).string();
    SCOPED_TRACE(name);
    if (std::string why = non_recipe_reason(path); !why.empty()) {
      others.push_back(name + ": " + why);
      continue;
    }
    std::string text = read_file(path.string());
    try {
      Recipe r = Recipe::from_text(path.string(), text);
      ++recipes;
      EXPECT_EQ(r.document().text(), text) << "a load/save without edits must be byte-identical";
      Plan p = r.plan();
      EXPECT_GT(p.world, 0);
      EXPECT_GE(p.dp, 1);
      EXPECT_GT(p.gbs, 0);
      EXPECT_GE(p.grad_accum, 1);
      check_micro_batch_edit(r, name);
      std::cout << "  recipe  " << name << ": " << to_string(r.framework())
                << (r.dialect().empty() ? "" : "/" + r.dialect()) << ", world " << p.world << " (" << p.world_source
                << "), tp " << p.tp << " pp " << p.pp << " cp " << p.cp << " ep " << p.ep << " dp " << p.dp
                << ", mbs " << p.mbs << " gbs " << p.gbs << " ga " << p.grad_accum << "\n";
    } catch (const InputError& e) {
      std::string msg = e.message();
      if (msg.rfind("not a training recipe", 0) == 0) {
        others.push_back(name + ": " + msg);
      } else {
        ADD_FAILURE() << e.what();
      }
    }
  }
  std::cout << recipes << " recipes loaded; " << others.size() << " files are not recipes:\n";
  for (const auto& o : others) std::cout << "  other   " << o << "\n";
  EXPECT_GE(recipes, 40);
}

}  // namespace
}  // namespace attune::recipe
