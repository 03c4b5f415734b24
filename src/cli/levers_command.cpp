// `attune levers FILE`: the recipe's framework, canonical plan and levers.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "attune/cli/commands.h"
#include "attune/recipe/recipe.h"
#include "attune/util/input_file.h"

namespace attune::cli {

namespace {

struct LeversArgs {
  std::string file;
  recipe::RecipeOptions options;
  bool json = false;
  bool all = false;
};

std::string hardware_line(const recipe::Plan& p) {
  std::string gpu = p.gpu.empty() ? "gpu unknown" : p.gpu;
  return fmt::format("{}, {} node(s) x {} GPUs = world {} ({})", gpu, p.nodes, p.gpus_per_node, p.world,
                     p.world_source == "file" ? "from the recipe" : p.world_source);
}

void print_plan(const recipe::Plan& p) {
  // A number only the run knows is shown as what the file says, never as the
  // default that stands in for it; nor is anything computed from it.
  auto n = [&](const char* name, long long v) {
    auto it = p.unknown.find(name);
    return it == p.unknown.end() ? std::to_string(v) : "unknown (" + it->second + ")";
  };
  const bool derived_known = p.unknown.empty();
  auto derived = [&](long long v, bool known) { return known ? std::to_string(v) : std::string("unknown"); };
  fmt::print("plan      tp {}  pp {}  vp {}  cp {}  ep {}  etp {}  dp {}\n", n("tp", p.tp), n("pp", p.pp), n("vp", p.vp),
             n("cp", p.cp), n("ep", p.ep), n("etp", p.etp), derived(p.dp, derived_known));
  fmt::print("          micro batch {} samples, global batch {} samples ({}), grad accumulation {}\n", n("mbs", p.mbs),
             derived(p.gbs, p.gbs_known()), p.gbs_rule, derived(p.grad_accum, derived_known));
  fmt::print("          sequence {} tokens, {} tokens per step\n", n("seq_len", p.seq_len),
             derived(p.tokens_per_step, p.gbs_known() && p.seq_len_known()));
  fmt::print("          recompute {}, precision {}\n", p.recompute, p.precision);
}

void print_levers(const recipe::Recipe& r, bool all) {
  auto levers = r.levers();
  int set = 0;
  for (const auto& lv : levers) set += lv.set_in_file ? 1 : 0;
  fmt::print("\nlevers set in the file ({}):\n", set);
  for (const auto& lv : levers) {
    if (lv.set_in_file) fmt::print("  {:<28} {:<48} {}\n", lv.def->name, lv.key, lv.value ? lv.value->str() : "");
  }
  int others = 0;
  for (const auto& lv : levers) {
    if (lv.set_in_file) continue;
    ++others;
    if (all) {
      fmt::print("  {:<28} {:<48} {} (default)\n", lv.def->name, lv.key,
                 lv.def->default_value.empty() ? "-" : lv.def->default_value);
    }
  }
  if (!all && others > 0) fmt::print("{} more levers at their defaults (--all lists them with their keys)\n", others);
}

void print_human(const recipe::Recipe& r) {
  recipe::Plan p = r.plan();
  fmt::print("recipe    {} ({}, {})\n", r.config_path(), recipe::framework_title(r.framework()),
             r.dialect().empty() ? recipe::to_string(r.document().format()) : r.dialect());
  fmt::print("model     {}\n", r.model() ? r.model()->name : "unknown");
  fmt::print("hardware  {}\n", hardware_line(p));
  print_plan(p);
  auto violations = r.violations();
  if (!violations.empty()) {
    fmt::print("\nrules:\n");
    for (const auto& v : violations) {
      fmt::print("  {:<7} {}: {} (rule {})\n", v.error ? "error" : "warning", v.key, v.message, v.rule);
    }
  }
  auto notes = r.notes();
  if (!notes.empty()) {
    fmt::print("\nnotes:\n");
    for (const auto& n : notes) fmt::print("  - {}\n", n);
  }
}

int run_levers(const LeversArgs& a) {
  regular_file_size(a.file, "recipe");  // a FIFO would block the load, a device never end
  recipe::Recipe r = recipe::Recipe::load(a.file, a.options);
  if (a.json) {
    print_json(r.to_json());
  } else {
    print_human(r);
    print_levers(r, a.all);
  }
  // A recipe that breaks a rule is bad input: the plan is shown, the exit says so.
  return recipe::has_errors(r.violations()) ? 2 : 0;
}

}  // namespace

void add_levers_command(CLI::App& app) {
  auto args = std::make_shared<LeversArgs>();
  CLI::App* cmd = app.add_subcommand(
      "levers", "Show a recipe's framework, its canonical plan (layout, batch, sequence) and every lever with the "
                "framework key it maps to and its current value. Exits 2 if the recipe breaks a validity rule.");
  cmd->add_option("FILE", args->file, "Recipe file (YAML, TOML or Megatron launch script) or attune wrapper file")
      ->required();
  add_recipe_options(*cmd, args->options);
  cmd->add_flag("--json", args->json, "Print JSON: {framework, plan, levers, violations, notes}");
  cmd->add_flag("--all", args->all, "List every lever with its key, including those at their defaults");
  cmd->callback([args]() { command_status() = run_levers(*args); });
}

}  // namespace attune::cli
