// The framework adapters (internal to the recipe module). Each states only what
// differs from the shared arithmetic in attune/recipe/adapter.h.
#pragma once

#include "attune/recipe/adapter.h"
#include "attune/recipe/framework_launch.h"
#include "attune/recipe/recipe.h"

namespace attune::recipe {

class MegatronAdapter : public Adapter {
 public:
  MegatronAdapter() : Adapter(Framework::Megatron) {}
  bool written_as_absent(const Recipe& recipe, const std::string& key, const Value& value) const override;
  FrameworkLaunch launch(const Recipe& recipe, const WrittenRecipe& files) const override;
  BatchRule batch_rule(const Recipe&) const override { return BatchRule::Explicit; }
  std::string doc_key(const Recipe& recipe, const std::string& catalog_key) const override;
  std::string catalog_key(const Recipe& recipe, const std::string& doc_path) const override;
  Layout read_layout(const Recipe& recipe) const override;
  std::string recompute(const Recipe& recipe) const override;
  std::string precision(const Recipe& recipe) const override;
  std::vector<Change> translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const override;

 protected:
  void framework_rules(const Recipe& recipe, const Plan& plan, std::vector<RuleViolation>& out) const override;
  int shard_group(const Recipe& recipe, const Layout& layout, const Plan& plan) const override;
};

class BridgeAdapter : public Adapter {
 public:
  BridgeAdapter() : Adapter(Framework::Bridge) {}
  FrameworkLaunch launch(const Recipe& recipe, const WrittenRecipe& files) const override;
  BatchRule batch_rule(const Recipe&) const override { return BatchRule::Explicit; }
  std::string precision(const Recipe& recipe) const override;
  std::vector<Change> translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const override;

 protected:
  void framework_rules(const Recipe& recipe, const Plan& plan, std::vector<RuleViolation>& out) const override;
  int shard_group(const Recipe& recipe, const Layout& layout, const Plan& plan) const override;
};

class AutoModelAdapter : public Adapter {
 public:
  AutoModelAdapter() : Adapter(Framework::AutoModel) {}
  FrameworkLaunch launch(const Recipe& recipe, const WrittenRecipe& files) const override;
  BatchRule batch_rule(const Recipe&) const override { return BatchRule::Explicit; }
  Layout read_layout(const Recipe& recipe) const override;
  std::string precision(const Recipe& recipe) const override;
  std::vector<Change> translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const override;
  std::string edit_lever(const Recipe& recipe, const std::string& name) const override;

 protected:
  void framework_rules(const Recipe& recipe, const Plan& plan, std::vector<RuleViolation>& out) const override;
  int shard_group(const Recipe& recipe, const Layout& layout, const Plan& plan) const override;
};

class TorchtitanAdapter : public Adapter {
 public:
  TorchtitanAdapter() : Adapter(Framework::Torchtitan) {}
  FrameworkLaunch launch(const Recipe& recipe, const WrittenRecipe& files) const override;
  BatchRule batch_rule(const Recipe&) const override { return BatchRule::Torchtitan; }
  Layout read_layout(const Recipe& recipe) const override;
  std::string precision(const Recipe& recipe) const override;
  std::string edit_lever(const Recipe& recipe, const std::string& name) const override;
  Value document_count(const Recipe& recipe, const std::string& name, long long count) const override;
  std::vector<Change> translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const override;

 protected:
  void derive_dp(const Layout& layout, Plan& plan) const override;
  void framework_rules(const Recipe& recipe, const Plan& plan, std::vector<RuleViolation>& out) const override;
  int shard_group(const Recipe& recipe, const Layout& layout, const Plan& plan) const override;
};

class HyperPodAdapter : public Adapter {
 public:
  HyperPodAdapter() : Adapter(Framework::HyperPod) {}
  FrameworkLaunch launch(const Recipe& recipe, const WrittenRecipe& files) const override;
  std::optional<LaunchedFile> launched_file(const Recipe& recipe, const std::string& dir) const override;
  BatchRule batch_rule(const Recipe& recipe) const override;
  std::string precision(const Recipe& recipe) const override;
  std::vector<Change> translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const override;
  Layout read_layout(const Recipe& recipe) const override;

 protected:
  void framework_rules(const Recipe& recipe, const Plan& plan, std::vector<RuleViolation>& out) const override;
  int shard_group(const Recipe& recipe, const Layout& layout, const Plan& plan) const override;
};

class AxolotlAdapter : public Adapter {
 public:
  AxolotlAdapter() : Adapter(Framework::Axolotl) {}
  FrameworkLaunch launch(const Recipe& recipe, const WrittenRecipe& files) const override;
  BatchRule batch_rule(const Recipe&) const override { return BatchRule::Axolotl; }
  std::string precision(const Recipe& recipe) const override;
  std::vector<Change> translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const override;

 protected:
  void derive_dp(const Layout& layout, Plan& plan) const override;
  void framework_rules(const Recipe& recipe, const Plan& plan, std::vector<RuleViolation>& out) const override;
  int shard_group(const Recipe& recipe, const Layout& layout, const Plan& plan) const override;
};

// Shared helpers for adapters.
std::string value_text(const std::optional<Entry>& e);  // "" when absent
bool truthy(const std::optional<Entry>& e);              // present and true
void add_rule(const Recipe& recipe, std::vector<RuleViolation>& out, bool ok, const std::string& rule,
              const std::string& lever, const std::string& message, bool error = true);
// recompute lever for frameworks whose key is a boolean: none/false -> false, full/true -> true.
Value recompute_as_bool(const Recipe& recipe, const LeverDef& lever, const Value& value);
// Changes that set a "granularity" style recompute (full needs method + layers).
std::vector<Change> granularity_recompute(const Recipe& recipe, const Value& value, const std::string& granularity_key,
                                          const std::string& method_key, const std::string& layers_key,
                                          const std::optional<Value>& none_value);
Change make_change(const Recipe& recipe, const std::string& doc_key, std::optional<Value> new_value);
// Lever `name` as the framework runs it (file value, else catalog default): as text, int or bool.
std::string effective_text(const Recipe& recipe, const std::string& name);
std::optional<long long> effective_int(const Recipe& recipe, const std::string& name);
bool effective_bool(const Recipe& recipe, const std::string& name);
// The launch parts every framework shares (framework_launch.cpp): the
// wrapper's launch.workdir, required with a message naming what needs it;
// the recipe's environment.
std::string required_workdir(const Recipe& recipe, const std::string& what_needs_it);
// PyTorch FSDP1-style sharding_strategy (FULL_SHARD, HYBRID_SHARD, SHARD_GRAD_OP,
// _HYBRID_SHARD_ZERO2, NO_SHARD; any case) -> Plan::dp_shard: FULL_SHARD (and
// "") shards over all of DP, HYBRID_SHARD within a node, the others leave the
// parameters whole (0).
int fsdp_shard_group(const std::string& strategy, const Plan& plan);
// torchtitan and AutoModel with pp > 1: each local batch is split into
// pipeline micro-batches of `pp_microbatch` samples; the micro batch becomes
// that size and the local batch is kept in Layout::local_batch.
void split_pipeline_batch(const Recipe& recipe, Layout& layout);
// The lever that `mbs` names in a recipe that splits its local batch into
// pipeline micro-batches: `pp_microbatch` when pp > 1, else `mbs`.
std::string pipeline_mbs_lever(const Adapter& adapter, const Recipe& recipe, const std::string& name);

}  // namespace attune::recipe
