// Replay (`attune replay DIR`): a campaign rebuilt from its journal and its
// trial logs alone, with today's code, to show where today's answer differs
// from the recorded one — so CI can replay old campaigns after an upgrade.
// Every run log is diagnosed again (a changed failure class, a step time or
// throughput beyond the tolerance); every proposal is applied again to its
// parent's recipe and judged again by the gate against the original (an
// edit that no longer applies or writes another file, a verdict that would
// now be a refusal, or an approval); every acceptance verdict, demotion and
// loss verification is recomputed over today's measurements in the context
// the campaign recorded (the runs made so far, the incumbent of the time);
// and the budget is summed again. A changed answer is not carried forward:
// the rest of the campaign is judged as it was run.
//
// Damaged input (a journal line that is not a record, a missing or
// unreadable log, a trial directory removed) is reported and skipped; the
// recorded measurement stands in for a run whose log is gone. Replay reads
// only: nothing in the directory is written, not even a lock.
//
// With a what-if policy (what_if.h) another policy is run against the record.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/campaign/campaign_record.h"
#include "attune/campaign/what_if.h"

namespace attune::campaign {

struct ReplayRequest {
  std::string dir;
  std::string what_if_policy;        // "" = none; else a policy::make_policy name
  policy::PolicySettings policy_settings;  // for --what-if llm|hybrid: the model and its limits
  double tolerance = 0.01;           // relative: a step time or throughput within it is the same
};

// One place where today's answer differs from the recorded one.
struct ReplayDifference {
  std::string kind;      // diagnosis | edit | gate | decision | demotion | verification | budget
  int trial = -1;        // -1: the campaign as a whole
  int run = 0;           // 0: not one run's
  std::string recorded, today;
  std::string what;      // plain words, naming the file where there is one
};

struct ReplayResult {
  std::string dir;
  std::string original;              // the original recipe's file, as found
  int trials = 0, runs = 0, verdicts = 0;   // what was replayed
  std::vector<ReplayDifference> differences;
  std::vector<DamagedInput> damaged; // reported and skipped
  std::vector<std::string> notes;    // read, but not as recorded (a gzipped log)
  std::optional<WhatIfResult> what_if;

  // Exit status 1: something differs, or some input could not be replayed.
  bool differs() const { return !differences.empty() || !damaged.empty(); }
};

// InputError for a directory that holds no campaign, a journal whose first
// line is not the campaign's inputs, or an unknown what-if policy.
ReplayResult replay_campaign(const ReplayRequest& request);

nlohmann::json to_json(const ReplayResult& r);

}  // namespace attune::campaign
