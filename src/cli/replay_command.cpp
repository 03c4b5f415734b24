// `attune replay DIR [--what-if POLICY] [--json]`: a campaign rebuilt from its
// directory with today's code (campaign/replay.h does the work); prints every
// place where today's answer differs from the recorded one, and with
// --what-if the path another policy would have taken. Exit status 0 when
// nothing differs, 1 when something does or some input could not be replayed.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attune/campaign/replay.h"
#include "attune/cli/commands.h"
#include "attune/cli/flag_checks.h"
#include "attune/cli/llm_flags.h"
#include "attune/policy/policy.h"

namespace attune::cli {

namespace {

struct ReplayArgs {
  campaign::ReplayRequest request;
  bool json = false;
  LlmFlags llm;
};

std::string where_text(const campaign::ReplayDifference& d) {
  if (d.trial < 0) return "campaign";
  return d.run > 0 ? fmt::format("trial {} run {}", d.trial, d.run) : fmt::format("trial {}", d.trial);
}

std::string tokens_text(const std::optional<double>& t) { return t ? fmt::format("{:.0f}", *t) : "-"; }

void print_what_if(const campaign::WhatIfResult& w) {
  fmt::print("\nwhat if --policy {}: {} measured in the record, {} predicted by the corrected model\n", w.policy, w.measured,
             w.predicted);
  fmt::print("{:>5}  {:<36} {:<10} {:>7}  |  {:<36} {:<10} {:>7} {}\n", "trial", "recorded", "outcome", "tok/s", w.policy,
             "outcome", "tok/s", "source");
  for (const campaign::WhatIfTrial& t : w.trials) {
    fmt::print("{:>5}  {:<36} {:<10} {:>7}  |  {:<36} {:<10} {:>7} {}\n", t.trial, t.recorded_label.substr(0, 36),
               t.recorded_outcome, tokens_text(t.recorded_tokens), t.label.substr(0, 36), t.outcome, tokens_text(t.tokens),
               t.source);
  }
  if (!w.stop_reason.empty()) fmt::print("the what-if stopped: {}\n", w.stop_reason);
  auto best = [](const char* who, const campaign::WhatIfBest& b) {
    fmt::print("{:<9} best: trial {}, {} tokens/s/GPU ({}){}{}\n", who, b.trial, tokens_text(b.tokens), b.source,
               b.path.empty() ? "" : ": ", fmt::join(b.path, "; "));
  };
  best("recorded", w.recorded);
  best("what-if", w.what_if);
  for (const std::string& note : w.policy_notes) fmt::print("note        {}\n", note);
  print_llm_usage(w.policy_usage);
}

void print_replay(const campaign::ReplayResult& r) {
  fmt::print("replayed    {} ({} trials, {} runs, {} verdicts; original recipe {})\n", r.dir, r.trials, r.runs, r.verdicts,
             r.original.empty() ? "not found" : r.original);
  for (const auto& d : r.differences)
    fmt::print("differs     {} {}: recorded {}, today {}: {}\n", where_text(d), d.kind, d.recorded, d.today, d.what);
  for (const auto& d : r.damaged) fmt::print("damaged     {}: {}\n", d.where, d.what);
  for (const auto& n : r.notes) fmt::print("note        {}\n", n);
  fmt::print("result      {}\n", !r.differences.empty() ? fmt::format("{} differences", r.differences.size())
                                : !r.damaged.empty()    ? "no difference in what could be replayed; some input is damaged"
                                                        : "no difference");
  if (r.what_if) print_what_if(*r.what_if);
}

int run_replay(ReplayArgs& a) {
  a.request.policy_settings.llm = llm_settings(a.llm);
  const campaign::ReplayResult r = campaign::replay_campaign(a.request);
  if (a.json) print_json(campaign::to_json(r));
  else print_replay(r);
  return r.differs() ? 1 : 0;
}

}  // namespace

void add_replay_command(CLI::App& app) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "Rebuild a campaign from its journal and trial logs with today's attune, and print every place where today's "
      "answer differs from the recorded one: a run's diagnosis (failure class, step time or throughput beyond 1%), an "
      "edit or gate verdict (a proposal that would now be refused), an acceptance decision, demotion or loss check that "
      "would go the other way, the budget. Reads only; works on a directory copied from another machine. Exit status 0 "
      "when nothing differs, 1 when something does or some input is damaged (reported and skipped)");
  cmd->add_option("DIR", args->request.dir, "The campaign directory (holds journal.jsonl)")->required();
  cmd->add_option("--what-if", args->request.what_if_policy,
                  "Also run this policy against the record: a recipe the campaign measured is answered from the record, "
                  "any other by the simulator under the model correction fitted on the recorded runs (marked "
                  "predicted); prints both paths trial by trial and both final bests. One of: " +
                      join_names(policy::policy_names()))
      ->check(one_of(policy::policy_names(), "policy"));
  add_llm_flags(*cmd, args->llm);
  cmd->add_flag("--json", args->json,
                "Print {dir, original, trials, runs, verdicts, differs, differences: [{kind, trial, run, recorded, today, "
                "what}], damaged: [{where, what}], notes, what_if?: {policy, trials: [{trial, recorded, what_if}], "
                "recorded_best, what_if_best, measured, predicted, policy_usage, policy_notes}} as JSON");
  cmd->callback([args]() { command_status() = run_replay(*args); });
}

}  // namespace attune::cli
