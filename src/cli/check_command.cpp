// `attune check ORIGINAL CANDIDATE`: the correctness gate alone, for CI and
// for humans. Exit 0 allowed, 1 refused, 2 bad input.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "attune/cli/commands.h"
#include "attune/gate/correctness_gate.h"
#include "attune/recipe/recipe.h"
#include "attune/util/error.h"

namespace attune::cli {

namespace {

struct CheckArgs {
  std::string original;
  std::string candidate;
  std::vector<std::string> edits;
  recipe::RecipeOptions options;
  gate::GateOptions gate;
  std::string unknown_keys = "refuse";
  bool json = false;
};

// The candidate: a copy of the original with each edit applied as `attune
// recipe set` applies it (Recipe::set: a canonical lever or a raw key path,
// with the follow-ups that keep the global batch). A key the file does not
// have is added, for the gate to judge.
recipe::Recipe apply_edits(const recipe::Recipe& original, const std::vector<std::string>& edits) {
  recipe::Recipe candidate = original;
  for (const auto& edit : edits) {
    const std::size_t eq = edit.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError({}, "--edit",
                       "expected LEVER=VALUE (e.g. tp=2, --micro-batch-size=4, env.NCCL_ALGO=Ring), got '" + edit + "'");
    }
    candidate.set(edit.substr(0, eq), edit.substr(eq + 1), /*allow_new_key=*/true);
  }
  return candidate;
}

std::string value_text(const std::optional<recipe::Value>& v) { return v ? v->str() : "(absent)"; }

void print_human(const gate::Verdict& v) {
  fmt::print("verdict   {}{}\n", v.allowed ? "ALLOWED" : "REFUSED",
             v.allowed ? (v.requires_parity ? " (pending the loss-parity check)" : "")
                       : fmt::format(" ({} reason{})", v.reasons.size(), v.reasons.size() == 1 ? "" : "s"));
  fmt::print("\nchanges ({}):\n", v.changes.size());
  for (const auto& c : v.changes) {
    std::string what = c.status == gate::ChangeStatus::Refused ? "refused  " + c.rule + ": " + c.reason
                       : c.status == gate::ChangeStatus::Lever  ? "allowed  lever " + c.lever
                                                                 : "allowed  " + to_string(c.status) +
                                                                     (c.rule.empty() ? "" : " " + c.rule) + ": " + c.reason;
    fmt::print("  {:<44} {} -> {}   {}\n", c.key, value_text(c.old_value), value_text(c.new_value), what);
  }
  std::vector<gate::RefusalReason> other;
  for (const auto& r : v.reasons) {
    if (r.key.empty() || r.rule == "vocab-padding") other.push_back(r);
  }
  if (!other.empty()) {
    fmt::print("\nrefused because:\n");
    for (const auto& r : other) fmt::print("  {}: {}\n", r.rule, r.message);
  }
  fmt::print("\ninvariants (before -> after):\n");
  for (const auto& [name, ba] : v.invariants) {
    fmt::print("  {:<16} {} -> {}{}\n", name, ba.first, ba.second, ba.first == ba.second ? "" : "   MOVED");
  }
  if (!v.warnings.empty()) {
    fmt::print("\nwarnings:\n");
    for (const auto& w : v.warnings) fmt::print("  - {}\n", w);
  }
}

int run_check(CheckArgs& a) {
  if (a.candidate.empty() == a.edits.empty()) {
    throw InputError({}, "CANDIDATE", "give either a CANDIDATE file or one or more --edit LEVER=VALUE");
  }
  if (a.unknown_keys != "refuse" && a.unknown_keys != "parity") {
    throw InputError({}, "--unknown-keys", "expected refuse or parity, got '" + a.unknown_keys + "'");
  }
  a.gate.unknown_keys_parity = a.unknown_keys == "parity";
  gate::CorrectnessGate gate(a.gate);
  recipe::Recipe original = recipe::Recipe::load(a.original, a.options);
  recipe::RecipeOptions candidate_options = a.options;
  candidate_options.framework = recipe::to_string(original.framework());
  recipe::Recipe candidate = a.candidate.empty() ? apply_edits(original, a.edits)
                                                 : recipe::Recipe::load(a.candidate, candidate_options);
  gate::Verdict v = gate.check(original, candidate);
  if (a.json) {
    print_json(gate::to_json(v));
  } else {
    print_human(v);
  }
  return v.allowed ? 0 : 1;
}

}  // namespace

void add_check_command(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check", "Run the correctness gate alone: compare a candidate recipe with the original and refuse any change "
               "that alters the training objective. Exit 0 allowed, 1 refused, 2 bad input.");
  cmd->add_option("ORIGINAL", args->original, "The original recipe (or attune wrapper file)")->required();
  cmd->add_option("CANDIDATE", args->candidate, "The candidate recipe, same framework (or use --edit)");
  cmd->add_option("--edit", args->edits,
                  "LEVER=VALUE applied to a copy of ORIGINAL to make the candidate, as `attune recipe set` applies "
                  "it: a canonical lever (tp=2, mbs=4, recompute=selective) or a raw key path (--lr=1e-3, "
                  "training.local_batch_size=2, env.NCCL_ALGO=Ring; Hydra +key= and recipes.key= spellings "
                  "accepted), with the same follow-ups (repeatable)");
  cmd->add_option("--allow", args->gate.allow,
                  "Accept a numerics change by name (repeatable): fp8, fp4, bf16_grad_reduce, optimizer_precision, "
                  "router_dtype, determinism, vocab_padding, ...");
  cmd->add_option("--allow-key", args->gate.allow_keys,
                  "Accept a change of a key that no catalog or rule knows (repeatable); objective rules still apply");
  cmd->add_option("--gate-rules", args->gate.rule_files,
                  "Add site rules from a YAML file (repeatable); they can only make the gate stricter");
  cmd->add_option("--unknown-keys", args->unknown_keys,
                  "refuse (default) or parity: an unknown key may run, but its trial can only be accepted after the "
                  "loss-parity check passes");
  cmd->add_flag("--json", args->json,
                "Print JSON: {verdict, changes: [{key, old, new, lever, status, rule}], reasons: [{rule, key, "
                "message}], invariants: {name: [before, after]}, warnings}");
  add_recipe_options(*cmd, args->options);
  cmd->callback([args]() { command_status() = run_check(*args); });
}

}  // namespace attune::cli
