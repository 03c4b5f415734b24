// `attune bench`: every policy on every scenario, as campaigns on the
// simulated cluster (campaign/bench.h does the work). This file parses the
// flags, shows the progress (a live bar on a terminal, a line per campaign
// otherwise, both on stderr), turns Ctrl-C into a clean stop and prints the
// Markdown table, or JSON with --json.
#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "attune/campaign/bench.h"
#include "attune/campaign/budget.h"
#include "attune/cli/commands.h"
#include "attune/cli/flag_checks.h"
#include "attune/cli/interrupt_flag.h"
#include "attune/cli/llm_flags.h"
#include "attune/cli/status_line.h"

namespace attune::cli {

namespace {

struct BenchArgs {
  campaign::BenchRequest request;
  std::string policies, budget;
  LlmFlags llm;
  bool json = false;
};

std::string progress_text(const campaign::BenchProgress& p) {
  const campaign::BenchCampaign& c = *p.finished;
  return fmt::format("{}/{} {:.0f} s · {} on {} seed {}: {:.3f} of the optimum, {:.2f}x, {:.1f} s", p.done, p.total,
                     p.elapsed_s, c.policy, c.scenario, c.seed, c.ratio_to_optimum, c.gain, c.seconds);
}

int run_bench_command(BenchArgs& a) {
  campaign::BenchRequest& q = a.request;
  q.policy_settings.llm = llm_settings(a.llm);
  if (!a.policies.empty()) q.policies = campaign::parse_bench_policies(a.policies, q.policy_settings);
  if (!a.budget.empty()) q.budget_gpu_hours = campaign::parse_budget(a.budget);
  InterruptFlag interrupt;
  campaign::BenchResult r;
  {
    StatusLine status;
    campaign::BenchHooks hooks;
    hooks.interrupted = [&] { return interrupt.raised(); };
    hooks.on_progress = [&](const campaign::BenchProgress& p) {
      if (status.live()) status.show(bar(p.done, p.total, 24) + " " + progress_text(p));
      else status.line("bench " + progress_text(p));
    };
    r = campaign::run_bench(q, hooks);
  }
  if (a.json) print_json(campaign::to_json(r));
  else fmt::print("{}", campaign::bench_markdown(r));
  fmt::print(stderr, "wrote {0}/bench.md, {0}/bench.json and {0}/bench.svg\n", r.out_dir);
  return r.interrupted ? 130 : 0;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Tune every scenario with every policy on the simulated cluster (same budget, gate and seeds) and compare");
  cmd->add_option("--scenarios", args->request.scenarios_dir,
                  "Directory of scenario directories, or one scenario (docs/scenarios.md; default recipes/scenarios)")
      ->check(existing_directory());
  cmd->add_option("--policies", args->policies,
                  "Policies to compare, comma-separated (default: rules,random,grid,planner,optuna,xgb, those built in; "
                  "with --llm also hybrid and llm)");
  cmd->add_option("--budget", args->budget,
                  "GPU-hours each campaign may spend: 200gpuh, 1.5kgpuh or 200 (default: each scenario's own)");
  cmd->add_option("--seeds", args->request.seeds, "Campaigns per policy and scenario, with seeds 1..N (default 5)")
      ->check(whole_number(1, 1000));
  cmd->add_option("--jobs", args->request.jobs, "Campaigns run at once (default: one per core)")->check(whole_number(1, 1024));
  cmd->add_option("--out", args->request.out_dir,
                  "Directory for bench.md, bench.json, bench.svg and campaigns/<policy>/<scenario>/seed-N "
                  "(default campaigns/bench-<time>)");
  cmd->add_flag("--keep-runs", args->request.keep_runs,
                "Keep each campaign's trials/ (run logs, about 1 MB a campaign); by default they are removed when the "
                "bench ends and only each campaign's journal, summary, report and best/ stay");
  add_llm_flags(*cmd, args->llm);
  cmd->add_flag("--json", args->json, "Print the result as JSON (as bench.json) instead of the Markdown table");
  cmd->callback([args] { command_status() = run_bench_command(*args); });
}

}  // namespace attune::cli
