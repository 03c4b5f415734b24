// run_in_directory when the run's log is not text (a crashed job can leave a
// zero-filled tail): the run is reported by its scheduler state with a note,
// and the campaign goes on; the log is not an input error of attune's.
#include "attune/campaign/directory_run.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "attune/cluster/backend_registry.h"
#include "attune/gate/correctness_gate.h"
#include "attune/recipe/recipe.h"
#include "../fixtures/llama3_8b_script.h"
#include "../fixtures/scratch_dir.h"

namespace attune::campaign {
namespace {

TEST(DirectoryRun, ALogThatIsNotTextLeavesTheRunUndiagnosedWithANote) {
  test::ScratchDir dir("attune_directory_run");
  dir.write("train.sh", test::llama3_8b_script(8, 2));
  const std::string wrapper = dir.write(
      "train.attune.yaml",
      "framework: megatron\nconfig: train.sh\nmodel: llama3-8b\nhardware: {gpu: h100, nodes: 1, gpus_per_node: 8}\n"
      "launch: {command: [bash, -c, \"printf 'iteration 1\\\\0\\\\0\\\\0\\\\n'\"]}\n");
  const recipe::Recipe r = recipe::Recipe::load(wrapper);
  const gate::ApprovedRecipe approved = gate::CorrectnessGate().approve(r, r);
  cluster::ClusterDefinition def;
  def.name = "local";
  def.backend = "local";
  def.payload = cluster::Payload::Command;
  auto c = cluster::make_cluster(def);
  DirectoryRunRequest q;
  q.run_dir = (dir.path() / "run").string();
  q.run_name = "attune-test-0001";
  q.recipe_file = wrapper;
  q.steps = 1;
  std::vector<std::string> notes;
  DirectoryRunHooks hooks;
  hooks.on_note = [&](const std::string& n) { notes.push_back(n); };
  DirectoryRunResult result;
  ASSERT_NO_THROW(result = run_in_directory(*c, def, approved, q, hooks));
  EXPECT_FALSE(result.diagnosis.has_value());
  bool noted = false;
  for (const auto& n : notes) noted = noted || n.find("cannot be read") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace attune::campaign
