// `attune tune RECIPE --budget 200gpuh`: the campaign (campaign/tune.h does
// the work). This file parses the flags, turns Ctrl-C into a clean stop,
// shows a live status line on a terminal (plain lines otherwise) and prints
// the summary, or JSON with --json.
#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "attune/campaign/budget.h"
#include "attune/campaign/tune.h"
#include "attune/cli/commands.h"
#include "attune/cli/flag_checks.h"
#include "attune/cli/interrupt_flag.h"
#include "attune/cli/llm_flags.h"
#include "attune/cli/status_line.h"
#include "attune/policy/policy.h"
#include "attune/util/error.h"

namespace attune::cli {

namespace {

struct TuneArgs {
  campaign::TuneRequest request;
  std::string budget;
  std::string resume;
  long long seed = -1;
  bool no_lessons = false;
  bool json = false;
  LlmFlags llm;
};

std::string progress_text(const campaign::TuneProgress& p) {
  return fmt::format("{} {:.0f}s · best {:.0f} tokens/s/GPU ({:+.1f}%) · {} {:.1f}/{:.0f} GPU-h", p.doing, p.run_elapsed_s,
                     p.best_tokens_per_s_per_gpu, 100 * p.gain, bar(p.spent_gpu_hours, p.budget_gpu_hours),
                     p.spent_gpu_hours, p.budget_gpu_hours);
}

std::string tokens_text(const std::optional<double>& t) { return t ? fmt::format("{:.0f} tokens/s/GPU", *t) : "-"; }

void print_summary(const campaign::TuneResult& r) {
  fmt::print("campaign    {} (policy {}, cluster {})\n", r.dir, r.policy, r.cluster);
  fmt::print("baseline    {:.0f} tokens/s/GPU\n", r.baseline_tokens_per_s_per_gpu);
  fmt::print("best        {:.0f} tokens/s/GPU, {:+.1f}% (trial {})\n", r.best_tokens_per_s_per_gpu, 100 * r.gain, r.best_trial);
  for (const auto& e : r.best_edits)
    fmt::print("  {:<40} {} -> {}{}\n", e.key, e.from.empty() ? "unset" : e.from, e.to.empty() ? "unset" : e.to,
               e.lever.empty() ? "" : "  (" + e.lever + ")");
  fmt::print("spent       {:.1f} of {:.1f} GPU-hours, {} trials, {} launches ({} failed), {} refused by the gate\n",
             r.gpu_hours, r.budget_gpu_hours, r.trials, r.launches, r.failed_launches, r.refused);
  print_llm_usage(r.policy_usage);
  fmt::print("stopped     {}\n", r.stop_reason);
  fmt::print("verified    {}\n", r.verification);
  fmt::print("tuned       {}\n", r.best_recipe);
  if (!r.best_wrapper.empty()) fmt::print("wrapper     {}\n", r.best_wrapper);
  fmt::print("diff        {}\n", r.best_diff);
  if (!r.report.empty()) fmt::print("report      {}\n", r.report);
}

int run_tune_command(TuneArgs& a) {
  campaign::TuneRequest& q = a.request;
  if (!a.budget.empty()) q.budget_gpu_hours = campaign::parse_budget(a.budget);
  if (a.seed >= 0) q.seed = static_cast<std::uint64_t>(a.seed);
  q.resume_dir = a.resume;
  q.use_lessons = !a.no_lessons;
  q.policy_settings.llm = llm_settings(a.llm);
  if (q.resume_dir.empty() && q.file.empty()) throw InputError({}, "RECIPE", "name the recipe to tune (or --resume DIR)");
  InterruptFlag interrupt;
  StatusLine status(a.json);
  campaign::TuneHooks hooks;
  hooks.interrupted = [&] { return interrupt.raised(); };
  hooks.on_progress = [&](const campaign::TuneProgress& p) { status.show(progress_text(p)); };
  hooks.on_note = [&](const std::string& s) { status.line("attune tune: " + s); };
  hooks.on_trial = [&](const campaign::TrialRecord& t) {
    status.line(fmt::format("trial {:>3}  {:<10} {:<40} {}  {}", t.trial, t.outcome, t.label.substr(0, 40),
                            tokens_text(t.tokens_per_s_per_gpu), t.reason));
  };
  const campaign::TuneResult r = campaign::run_tune(q, hooks);
  if (a.json) {
    print_json(campaign::to_json(r));
  } else {
    print_summary(r);
  }
  return r.interrupted ? 130 : 0;
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand("tune", "Tune a recipe's throughput within a GPU-hour budget (the campaign)");
  cmd->add_option("RECIPE", args->request.file, "Recipe, attune wrapper or simulator scenario to tune");
  cmd->add_option("--budget", args->budget,
                  "GPU-hours the campaign may spend: 200gpuh, 1.5kgpuh, 40gpuh or 200 (a scenario has its own)");
  cmd->add_option("--cluster", args->request.cluster, "Cluster to run on (clusters.yaml name; default sim)");
  cmd->add_option("--clusters", args->request.clusters_file, "Cluster definitions file (default: the user's clusters.yaml)");
  std::string names;
  for (const auto& n : policy::policy_names()) names += (names.empty() ? "" : "|") + n;
  cmd->add_option("--policy", args->request.policy, "Who proposes the trials: " + names + " (default rules)");
  add_llm_flags(*cmd, args->llm);
  cmd->add_option("--out", args->request.out_dir, "Campaign directory (default campaigns/<recipe>-<time>)");
  cmd->add_option("--resume", args->resume, "Carry on the campaign in this directory (its inputs are its own)");
  cmd->add_option("--max-trials", args->request.max_trials, "Stop after this many launched trials (default: no limit)")
      ->check(whole_number(0));
  cmd->add_option("--parallel", args->request.parallel, "Candidates screened at once, each run in flight together; the worst case of each is held against the budget while it runs (default 1)")
      ->check(whole_number(1));
  cmd->add_option("--patience", args->request.patience, "Stop after this many trials without a new best (default 12)")
      ->check(whole_number(0));
  cmd->add_option("--allow", args->request.gate.allow, "Numerics change the gate may allow (fp8, ...); repeatable");
  cmd->add_option("--allow-key", args->request.gate.allow_keys, "Key the gate may let change although no rule knows it; repeatable");
  cmd->add_option("--seed", args->seed, "Campaign seed (default: a fresh one, written to campaign.json)")
      ->check(whole_number(0, LLONG_MAX));
  cmd->add_option("--lessons", args->request.lessons_file, "Lessons store (default ~/.local/share/attune/lessons.jsonl)");
  cmd->add_flag("--no-lessons", args->no_lessons, "Neither read nor write lessons");
  cmd->add_option("--hang-factor", args->request.hang_factor, "A run with no new step for this many step times is hung (default 10)")
      ->check(positive_number());
  cmd->add_option("--startup-allowance", args->request.startup_allowance_s, "Seconds allowed before the first step (default 900)")
      ->check(non_negative_number());
  cmd->add_flag("--json", args->json, "Print the summary as JSON");
  add_recipe_options(*cmd, args->request.options);
  cmd->callback([args] { command_status() = run_tune_command(*args); });
}

}  // namespace attune::cli
