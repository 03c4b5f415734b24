// Adapter: what one framework's keys mean. It maps canonical levers to the
// framework's keys (through its lever catalog), reads the layout into a Plan
// with the framework's rule for the global batch, checks the validity rules and
// re-solves the values that must follow a lever edit. One subclass per
// framework; the shared arithmetic lives here.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attune/recipe/edit.h"
#include "attune/recipe/framework.h"
#include "attune/recipe/lever_catalog.h"
#include "attune/recipe/plan.h"
#include "attune/recipe/rule_violation.h"

namespace attune::recipe {

class Recipe;
struct FrameworkLaunch;
struct WrittenRecipe;

// A file the framework's own launcher makes of the recipe before the training
// process reads it (HyperPod's launcher resolves the recipe's interpolations).
struct LaunchedFile {
  std::string name;  // file name in the run directory
  std::string text;
};

// How a framework arrives at the global batch (docs/architecture.md, "Global batch rules").
enum class BatchRule {
  Explicit,    // a global-batch key; GA = GBS / (MBS * DP) (Megatron, Bridge, AutoModel, NeMo)
  Torchtitan,  // global_batch_size, or local * DP when it is -1
  SmpImplied,  // HyperPod hf_*: GBS = train_batch_size * world / (TP * CP); no GA key
  Axolotl,     // GBS = micro * GA * world / (TP * CP); GA is a key
};

// The layout numbers as the recipe states them (before deriving DP or GBS).
struct Layout {
  int nodes = 0, gpus_per_node = 0;
  int tp = 1, pp = 1, vp = 1, cp = 1, ep = 1, etp = 1;
  int dp_shard = 0;          // 0 = not stated; torchtitan: -1 = auto
  int dp_replicate = 1;
  int dp_explicit = 0;       // AutoModel dp_size when set
  int mbs = 1;               // micro batch: what one forward/backward pass takes per GPU
  int local_batch = 0;       // samples per DP rank per pass of the step when it differs from mbs
                             // (torchtitan/AutoModel with PP: local_batch_size, split into
                             // micro-batches of the pipeline micro-batch size); 0 = mbs
  std::optional<long long> gbs;  // explicit global batch (torchtitan: -1 counts as absent)
  std::optional<long long> grad_accum;
  long long seq_len = 0;
  // A batch schedule's global batch of each phase (Megatron's
  // --rampup-batch-size, --step-batch-size-schedule); empty when there is none.
  std::vector<long long> batch_phases;
  // Numbers known only at run time (`$(nproc)`, an environment variable):
  // canonical name -> the text the file gives. Their fields hold the default.
  std::map<std::string, std::string> unknown;
};

class Adapter {
 public:
  explicit Adapter(Framework framework);
  virtual ~Adapter() = default;

  Framework framework() const { return framework_; }
  const LeverCatalog& catalog() const;
  virtual BatchRule batch_rule(const Recipe& recipe) const = 0;

  // Document path of a catalog key (Megatron's CI YAML nests flags under
  // MODEL_ARGS; env.X lives under the framework's env section).
  virtual std::string doc_key(const Recipe& recipe, const std::string& catalog_key) const;
  // Inverse: the catalog key of a document path ("" if it has no catalog form).
  virtual std::string catalog_key(const Recipe& recipe, const std::string& doc_path) const;

  virtual Layout read_layout(const Recipe& recipe) const;
  // The catalog lever that a canonical lever name edits in this recipe; the
  // name itself except where the recipe moves the quantity elsewhere
  // (torchtitan/AutoModel with pp > 1: `mbs` is `pp_microbatch`).
  virtual std::string edit_lever(const Recipe& recipe, const std::string& name) const;
  virtual std::string recompute(const Recipe& recipe) const;
  virtual std::string precision(const Recipe& recipe) const = 0;
  // The plan with DP, GBS, GA and tokens derived from the world size: the
  // user's hardware, else the file's, else `assumed_nodes` nodes.
  Plan plan(const Recipe& recipe, int assumed_nodes = 1) const;

  // Validity rules on a plan of this recipe.
  std::vector<RuleViolation> validate(const Recipe& recipe, const Plan& plan) const;

  // Whether setting document key `key` to `value` is written by removing the
  // key: Megatron's CI harness turns a MODEL_ARGS flag set to false into
  // `--flag false`, which argparse refuses, so a flag turned off is left out.
  virtual bool written_as_absent(const Recipe&, const std::string&, const Value&) const { return false; }

  // The framework's launch contract (framework_launch.h) for the recipe as
  // written to `files`: its usual command (when the wrapper gives none), the
  // environment, the steps before training. Throws InputError when the
  // recipe cannot be launched as written.
  virtual FrameworkLaunch launch(const Recipe& recipe, const WrittenRecipe& files) const = 0;
  // What the framework's own launcher would hand the training process instead
  // of the recipe file; nullopt: the recipe file itself.
  virtual std::optional<LaunchedFile> launched_file(const Recipe& recipe, const std::string& dir) const;

  // The document value that states `count` of the plan's quantity `name`
  // (mbs, gbs: samples): the count itself, except where the framework counts
  // in other units (torchtitan's Python configs count tokens). Throws
  // InputError when the recipe does not say the unit.
  virtual Value document_count(const Recipe& recipe, const std::string& name, long long count) const;

  // The key changes that set canonical lever `lever` to `value` (most levers
  // are one key; recompute may touch several). Throws InputError on a bad value.
  virtual std::vector<Change> translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const;

 protected:
  virtual void framework_rules(const Recipe& recipe, const Plan& plan, std::vector<RuleViolation>& out) const;
  virtual void derive_dp(const Layout& layout, Plan& plan) const;
  // Plan::dp_shard: the number of data-parallel ranks (CP excluded) that the
  // parameters, gradients and optimizer state are sharded over (FSDP /
  // ZeRO-3); 0 when parameters are not sharded. Called after derive_dp.
  virtual int shard_group(const Recipe& recipe, const Layout& layout, const Plan& plan) const;

  Framework framework_;
};

// The adapter of a framework (static instances).
const Adapter& adapter_for(Framework framework);

// Checks `value` against the lever's type and domain; throws InputError naming
// `file` and the key with what was expected.
Value check_lever_value(const std::string& file, const LeverDef& lever, const Value& value);

}  // namespace attune::recipe
