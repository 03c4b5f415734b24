// CampaignParts: everything a campaign runs with, made once by
// open_campaign() from its request (or, on --resume, from the inputs its
// journal recorded first): the locked directory, the journal (ledger), the
// log, the launch target, the cluster (serialized for runs in flight
// together), the gate, the policy, the budget, the lessons and the seed. The
// loop (tune.cpp), the runs (trial_runs.h) and the ending (campaign_finish.h)
// share one; nothing in it is made twice.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "attune/campaign/budget.h"
#include "attune/campaign/sim_target.h"
#include "attune/campaign/tune.h"
#include "attune/cluster/cluster.h"
#include "attune/cluster/cluster_config.h"
#include "attune/gate/correctness_gate.h"
#include "attune/ledger/ledger.h"
#include "attune/policy/lessons.h"
#include "attune/policy/policy.h"
#include "attune/util/clock.h"
#include "attune/util/file_lock.h"

namespace attune::campaign {

struct CampaignParts {
  TuneRequest q;                      // as the campaign started (a resume's inputs are the journal's)
  std::string dir;
  std::optional<FileLock> lock;
  bool made_directory = false;        // this tune created the directory (not --resume, not an existing --out)
  std::unique_ptr<ledger::Ledger> journal;
  std::shared_ptr<spdlog::logger> log;
  std::optional<LaunchTarget> target;
  cluster::ClusterDefinition def;
  std::unique_ptr<cluster::Cluster> cluster;
  std::unique_ptr<gate::CorrectnessGate> gate;
  std::unique_ptr<policy::Policy> policy;
  std::vector<policy::Lesson> lessons;
  std::unique_ptr<Budget> budget;
  std::uint64_t seed = 1;
  Clock* clock = nullptr;             // never null once opened

  void write_file(const std::string& path, const std::string& text) const;
  // The trial the journal's records make the incumbent (ledger_state.h).
  int incumbent_n() const { return journal->state().incumbent; }
};

// Opens (or, with resume_dir, reopens) the campaign directory, locks it,
// and makes every part. InputError for a bad request: a budget missing or
// malformed, an unknown cluster or policy, a directory another tune holds,
// a journal that is not a campaign's. A request refused before anything was
// journalled leaves nothing behind (the directory it made goes).
CampaignParts open_campaign(const TuneRequest& request, const TuneServices& services);

}  // namespace attune::campaign
