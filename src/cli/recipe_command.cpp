// `attune recipe set` and `attune recipe diff`.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "attune/cli/commands.h"
#include "attune/cli/parse_error.h"
#include "attune/recipe/recipe.h"
#include "attune/recipe/recipe_files.h"
#include "attune/recipe/recipe_diff.h"
#include "attune/util/error.h"

namespace attune::cli {

namespace {

struct SetArgs {
  std::string file;
  std::string assignment;
  std::vector<std::string> extras;  // what CLI11 left over: a `--key=value` edit after FILE
  std::string output;
  recipe::RecipeOptions options;
  bool add = false;
  bool json = false;
};

struct DiffArgs {
  std::string a, b;
  recipe::RecipeOptions options;
  bool json = false;
};

// The one edit: the EDIT positional, or an unknown `--flag=value` after FILE
// (the raw key spelling `recipe set FILE --micro-batch-size=2`, which CLI11
// leaves over as an extra), split at its first '='.
std::pair<std::string, std::string> split_assignment(const SetArgs& a) {
  std::vector<std::string> edits;
  if (!a.assignment.empty()) edits.push_back(a.assignment);
  for (const auto& extra : a.extras) {
    if (extra == "--") continue;  // the mark that ends the options, kept by CLI11
    const std::size_t eq = extra.find('=');
    if (extra.rfind("--", 0) == 0 && eq != std::string::npos && eq > 2) {
      edits.push_back(extra);
    } else if (extra.rfind("--", 0) == 0) {
      throw InputError({}, "", unexpected_argument_message("attune recipe set", extra) +
                                   "; a raw key edit is written KEY=VALUE in one argument, e.g. " + extra + "=2");
    } else {
      throw InputError({}, "", unexpected_argument_message("attune recipe set", extra));
    }
  }
  if (edits.empty()) {
    throw InputError({}, "EDIT", "missing the edit: give LEVER=VALUE (e.g. tp=2, --micro-batch-size=4, env.NCCL_ALGO=Ring)");
  }
  if (edits.size() > 1) {
    throw InputError({}, "EDIT", "one edit at a time, got '" + edits[0] + "' and '" + edits[1] + "'");
  }
  const std::string& edit = edits.front();
  const std::size_t eq = edit.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError({}, edit, "expected LEVER=VALUE (e.g. tp=2, --micro-batch-size=4, env.NCCL_ALGO=Ring)");
  }
  return {edit.substr(0, eq), edit.substr(eq + 1)};
}

void print_plan_delta(const recipe::Plan& b, const recipe::Plan& a) {
  auto delta = [](const char* name, long long x, long long y) {
    return x == y ? fmt::format("{} {}", name, x) : fmt::format("{} {} -> {}", name, x, y);
  };
  fmt::print("plan      {}, {}, {}, {}, {}\n", delta("tp", b.tp, a.tp), delta("pp", b.pp, a.pp), delta("cp", b.cp, a.cp),
             delta("dp", b.dp, a.dp), delta("mbs", b.mbs, a.mbs));
  fmt::print("          {}; global batch {} samples{}; {} tokens per step{}\n",
             delta("grad accumulation", b.grad_accum, a.grad_accum), a.gbs, a.gbs == b.gbs ? " (kept)" : " (CHANGED)",
             a.tokens_per_step, a.tokens_per_step == b.tokens_per_step ? " (kept)" : " (CHANGED)");
}

int run_set(const SetArgs& a) {
  auto [lever, value] = split_assignment(a);
  const recipe::FileEdit result = recipe::edit_recipe_file(a.file, a.options, lever, value, a.add, a.output);
  const recipe::EditResult& edit = result.edit;
  const std::string& out = result.written;
  if (a.json) {
    nlohmann::json j = recipe::to_json(edit);
    j["output"] = out.empty() ? nlohmann::json(nullptr) : nlohmann::json(out);
    print_json(j);
    return 0;
  }
  for (const auto& c : edit.changes) fmt::print("edit      {}\n", recipe::describe(c));
  for (const auto& c : edit.follow_ups) fmt::print("follow-up {}  ({})\n", recipe::describe(c), c.why);
  print_plan_delta(edit.before, edit.after);
  if (a.output.empty()) {
    fmt::print("nothing written (pass -o OUT to write the edited recipe)\n");
  } else if (out != a.output) {
    fmt::print("wrote     {} (the file the wrapper {} names)\n", out, a.output);
  } else {
    fmt::print("wrote     {}\n", out);
  }
  return 0;
}

int run_diff(const DiffArgs& a) {
  const recipe::RecipeDiff d = recipe::diff_recipe_files(a.a, a.b, a.options);
  if (a.json) {
    print_json(recipe::to_json(d));
    return 0;
  }
  if (d.empty()) {
    fmt::print("no semantic difference\n");
    return 0;
  }
  for (const auto& k : d.keys) {
    fmt::print("  {:<48} {} -> {}{}\n", k.key, k.old_value ? k.old_value->str() : "(absent)",
               k.new_value ? k.new_value->str() : "(absent)", k.lever.empty() ? "" : "  [" + k.lever + "]");
  }
  if (!d.derived.empty()) {
    fmt::print("derived:\n");
    for (const auto& x : d.derived) fmt::print("  {:<20} {} -> {}\n", x.name, x.old_value, x.new_value);
  }
  return 0;
}

void add_set(CLI::App& recipe_cmd) {
  auto args = std::make_shared<SetArgs>();
  CLI::App* cmd = recipe_cmd.add_subcommand(
      "set", "Apply one lever edit, re-solve what must follow (grad accumulation or an explicit global batch so the "
             "global batch is kept; DP from the world size) and show the edit with its follow-ups.");
  cmd->add_option("FILE", args->file, "Recipe file or attune wrapper file")->required();
  // Not ->required(): a raw `--key=value` edit arrives as an extra (allow_extras)
  // and is taken as EDIT; split_assignment says when there is none.
  cmd->add_option("EDIT", args->assignment,
                  "LEVER=VALUE (required): a canonical lever (tp=2, mbs=4, recompute=selective) or a raw key path "
                  "(training.local_batch_size=2, --micro-batch-size=2, env.NCCL_ALGO=Ring; `--` before it is "
                  "needed only when the key is one of attune's own flags, e.g. -- --nodes=2)");
  cmd->allow_extras();
  cmd->add_option("-o,--output", args->output,
                  "Write the edited recipe here, in the same format (atomic; may be FILE itself; when FILE is a wrapper and "
                  "OUT is that wrapper, the file it names is edited; a symlink is written through, and what is not a "
                  "regular file is refused). "
                  "Without it nothing is written");
  cmd->add_flag("--add", args->add, "Allow adding a key that is neither a known lever nor already in the file");
  cmd->add_flag("--json", args->json, "Print JSON: {lever, changes, follow_ups, plan_before, plan_after}");
  add_recipe_options(*cmd, args->options);
  cmd->callback([args, cmd]() {
    args->extras = cmd->remaining();
    command_status() = run_set(*args);
  });
}

void add_diff(CLI::App& recipe_cmd) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = recipe_cmd.add_subcommand(
      "diff", "The semantic difference of two recipes of the same framework: each key whose value differs "
              "(1e-4 equals 0.0001) and the derived values that moved (DP, global batch, tokens per step, ...).");
  cmd->add_option("A", args->a, "The first (original) recipe")->required();
  cmd->add_option("B", args->b, "The second (edited) recipe")->required();
  cmd->add_flag("--json", args->json, "Print JSON: {changes: [{key, old, new, lever}], derived: [{name, old, new}]}");
  add_recipe_options(*cmd, args->options);
  cmd->callback([args]() { command_status() = run_diff(*args); });
}

}  // namespace

void add_recipe_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("recipe", "Edit and compare recipe files");
  cmd->require_subcommand(1);
  add_set(*cmd);
  add_diff(*cmd);
}

}  // namespace attune::cli
