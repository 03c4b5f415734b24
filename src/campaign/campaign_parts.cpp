#include "attune/campaign/campaign_parts.h"

#include <filesystem>
#include <random>

#include <fmt/format.h>
#include <spdlog/sinks/basic_file_sink.h>

#include "attune/campaign/run_names.h"
#include "attune/campaign/tune_inputs.h"
#include "attune/cluster/backend_registry.h"
#include "attune/cluster/serialized_cluster.h"
#include "attune/sim/scenario_report.h"
#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::campaign {

namespace fs = std::filesystem;

void CampaignParts::write_file(const std::string& path, const std::string& text) const {
  write_file_atomic(path, text, q.durable);
}

namespace {

void open_directory(CampaignParts& p) {
  const TuneRequest& q = p.q;
  const bool resume = !q.resume_dir.empty();
  p.dir = resume ? q.resume_dir : (q.out_dir.empty() ? stamped_dir("campaigns", q.file) : q.out_dir);
  const fs::path dir(p.dir);
  if (resume && !fs::exists(dir / "journal.jsonl"))
    throw InputError({p.dir, 0, 0}, "--resume", "no campaign here (no journal.jsonl)");
  if (!resume && fs::exists(dir / "journal.jsonl"))
    throw InputError({p.dir, 0, 0}, "--out",
                     "this directory holds a campaign already; carry it on with --resume " + p.dir +
                         " or choose another --out");
  p.made_directory = !resume && !fs::exists(dir);
  fs::create_directories(dir);
  long holder = 0;
  p.lock = FileLock::try_lock((dir / ".lock").string(), &holder);
  if (!p.lock)
    throw InputError({p.dir, 0, 0}, resume ? "--resume" : "--out",
                     fmt::format("another attune tune (pid {}) is working in this directory", holder));
  p.journal = std::make_unique<ledger::Ledger>((dir / "journal.jsonl").string(), q.durable);
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>((dir / "campaign.log").string());
  p.log = std::make_shared<spdlog::logger>("campaign", sink);
  p.log->set_pattern("%Y-%m-%dT%H:%M:%S.%e %v");
  p.log->flush_on(spdlog::level::info);
}

// A resumed campaign runs with the inputs it started with.
void recall_inputs(CampaignParts& p) {
  const auto& events = p.journal->events();
  if (events.empty()) return;
  if (ledger::kind_of(events.front()) != ledger::EventKind::Campaign)
    throw InputError({p.journal->path(), 1, 0}, "event", "the journal does not start with the campaign's inputs");
  const std::string resume = p.q.resume_dir;
  try {
    read_tune_inputs(ledger::campaign_started(events.front()).inputs, p.q);
  } catch (const nlohmann::json::exception& e) {
    throw InputError({p.journal->path(), 1, 0}, "inputs", std::string("not a campaign's inputs: ") + e.what());
  }
  p.q.resume_dir = resume;
}

void make_parts(CampaignParts& p, const TuneServices& services) {
  TuneRequest& q = p.q;
  if (q.parallel < 1) throw InputError({}, "--parallel", fmt::format("expected 1 or more candidates in flight, got {}", q.parallel));
  p.target = load_launch_target(q.file, q.options);
  if (!q.budget_gpu_hours) {
    if (!p.target->scenario || p.target->scenario->harness.empty())
      throw InputError({}, "--budget", "say how many GPU-hours the campaign may spend (e.g. --budget 200gpuh)");
    q.budget_gpu_hours = sim::read_harness(p.target->scenario->harness).budget_gpu_hours;
  }
  if (!q.seed) q.seed = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  p.seed = *q.seed;
  p.budget = std::make_unique<Budget>(*q.budget_gpu_hours);
  const bool default_location = q.clusters_file.empty();
  const auto defs = cluster::load_cluster_definitions(
      default_location ? cluster::default_clusters_path() : q.clusters_file, default_location);
  p.def = cluster::find_cluster(defs, q.cluster);
  const cluster::SimulationContext sim{p.target->truth_file, p.seed};
  std::unique_ptr<cluster::Cluster> backend =
      services.make_cluster ? services.make_cluster(p.def, sim) : cluster::make_cluster(p.def, sim);
  p.cluster = std::make_unique<cluster::SerializedCluster>(std::move(backend));
  p.gate = std::make_unique<gate::CorrectnessGate>(q.gate);
  if (q.policy_settings.llm && !policy::policy_asks_llm(q.policy))
    throw InputError({}, "--llm", "the model is only asked with --policy llm or --policy hybrid");
  p.policy = policy::make_policy(q.policy, q.policy_settings);
  if (q.use_lessons) p.lessons = policy::read_lessons(q.lessons_file.empty() ? policy::default_lessons_path() : q.lessons_file);
  if (p.journal->events().empty()) {
    const nlohmann::json inputs = tune_inputs_json(q, p.seed, *q.budget_gpu_hours);
    p.journal->record(ledger::CampaignStarted{inputs});
    p.write_file((fs::path(p.dir) / "campaign.json").string(), inputs.dump(2) + "\n");
  }
}

// A request refused before anything was journalled leaves no campaign
// behind: the directory this tune made goes, or in a directory that was
// there already the files it put there.
void discard_new_directory(CampaignParts& p) {
  if (!p.q.resume_dir.empty() || !p.journal || !p.journal->events().empty()) return;
  const fs::path dir(p.dir);
  p.log.reset();
  p.journal.reset();
  p.lock.reset();
  std::error_code ec;
  if (p.made_directory) {
    fs::remove_all(dir, ec);
    return;
  }
  for (const char* f : {"journal.jsonl", "campaign.log", ".lock"}) fs::remove(dir / f, ec);
}

}  // namespace

CampaignParts open_campaign(const TuneRequest& request, const TuneServices& services) {
  CampaignParts p;
  p.q = request;
  p.clock = services.clock ? services.clock : &steady_clock();
  open_directory(p);
  try {
    recall_inputs(p);
    make_parts(p, services);
  } catch (const InputError&) {
    discard_new_directory(p);
    throw;
  }
  return p;
}

}  // namespace attune::campaign
