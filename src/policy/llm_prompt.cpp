#include "attune/policy/llm_prompt.h"

#include <fmt/format.h>

#include "attune/recipe/lever_catalog.h"
#include "attune/util/embedded.h"
#include "attune/util/unified_diff.h"

namespace attune::policy {

namespace {

std::string type_name(recipe::LeverType t) {
  switch (t) {
    case recipe::LeverType::Int: return "int";
    case recipe::LeverType::Float: return "float";
    case recipe::LeverType::Bool: return "bool";
    case recipe::LeverType::Enum: return "enum";
    case recipe::LeverType::String: return "string";
    case recipe::LeverType::List: return "list";
  }
  return "string";
}

std::string lever_line(const recipe::LeverDef& l) {
  std::string out = fmt::format("- {} ({}; {}", l.name, l.key.empty() ? l.pattern : l.key, type_name(l.type));
  if (!l.values.empty()) out += ": " + fmt::format("{}", fmt::join(l.values, "|"));
  if (l.min) out += fmt::format(", min {}", *l.min);
  if (l.max) out += fmt::format(", max {}", *l.max);
  if (!l.default_value.empty()) out += ", default " + l.default_value;
  if (l.safety == recipe::LeverSafety::Numerics) out += ", changes numerics: only with --allow " + l.allow_name;
  out += ")";
  if (!l.trades.empty()) out += ": " + l.trades;
  if (!l.constraints.empty()) out += fmt::format(" [{}]", fmt::join(l.constraints, "; "));
  return out + "\n";
}

std::string catalog_section(const recipe::Recipe& r) {
  const recipe::LeverCatalog& c = recipe::lever_catalog(recipe::to_string(r.framework()));
  std::string out = fmt::format("## Levers of {} (the names propose takes; a raw key of the file works too)\n\n", c.title);
  for (const auto& l : c.levers) {
    if (l.dialect.empty() || l.dialect == r.dialect()) out += lever_line(l);
  }
  if (!c.refused.empty()) {
    out += "\nKeys the gate refuses even inside those families:\n";
    for (const auto& k : c.refused) out += fmt::format("- {}: {}\n", k.key, k.reason);
  }
  return out;
}

std::string lessons_section(const recipe::Recipe& r, const std::vector<Lesson>& lessons) {
  const std::string gpu = r.hardware().gpu;
  const std::string cls = r.model() ? model_class(*r.model()) : "";
  const std::string fw = recipe::to_string(r.framework());
  std::string out;
  int n = 0;
  for (const auto& l : lessons) {
    if (l.gpu != gpu || l.model_class != cls || l.framework != fw || ++n > 40) continue;
    out += fmt::format("- {} = {}: {:+.1f}% ({}) at {}\n", l.lever, l.value, 100 * l.effect, l.outcome, l.context.dump());
  }
  if (out.empty()) return "";
  return fmt::format("## Lessons of earlier campaigns ({}, {}, {})\n\n{}", gpu, cls, fw, out);
}

const char* kGateSection =
    "## What the gate refuses, and why\n\n"
    "The correctness gate sits outside you and judges the edited file itself. It refuses any change of what the recipe "
    "trains: the global batch, the sequence length, the data and its order, the learning-rate schedule, the optimizer "
    "and its hyper-parameters, the seed, the model architecture, the loss, and numerics (precision, FP8, optimizer "
    "kernels that are not numerically equivalent) unless the user allowed that lever. A value the recipe reads only at "
    "run time cannot be changed, and a layout must keep its divisibility rules (grad accumulation a whole number). "
    "Follow-ups that keep the objective (grad accumulation absorbing a new data-parallel size) are added for you.\n";

const char* kToolsSection =
    "## How to work\n\n"
    "Answer every turn with tool calls only. Use predict (free) to compare a few edits before you spend GPU time; "
    "read_log and read_profile to look at a run. Then call propose with exactly one lever and its new value; a "
    "refusal, an unknown lever or a repeat comes back as that call's result and you try again. Call stop only when "
    "nothing left is expected to beat the incumbent by more than the noise.\n";

}  // namespace

std::string llm_system_prompt(const recipe::Recipe& original, const std::vector<Lesson>& lessons, bool hybrid) {
  const EmbeddedFile* skill = find_embedded("skills/attune/SKILL.md");
  std::string out = "You are attune's tuning policy: you raise the training throughput of one recipe without changing "
                    "what it trains, one lever per trial, within a GPU-hour budget.\n\n";
  if (skill) out += skill->content + "\n";
  out += catalog_section(original) + "\n";
  out += lessons_section(original, lessons);
  out += std::string("\n") + kGateSection + "\n" + kToolsSection;
  if (hybrid) {
    out += "\nThe rules policy ranks candidates for you each round with the corrected model's predictions. Take one "
           "with propose(lever_or_key=\"candidate\", value=<its number>) or propose something outside the ranking "
           "when the diagnosis calls for it.\n";
  }
  return out;
}

namespace {

std::string opt(const std::optional<double>& v, const char* f) {
  return v ? fmt::format(fmt::runtime(f), *v) : "-";
}

std::string throughput(const Observation& o) {
  if (!o.tokens_per_s_per_gpu) return "-";
  if (!o.tokens_ci95_low || !o.tokens_ci95_high) return fmt::format("{:.0f}", *o.tokens_per_s_per_gpu);
  return fmt::format("{:.0f} ({:.0f}-{:.0f})", *o.tokens_per_s_per_gpu, *o.tokens_ci95_low, *o.tokens_ci95_high);
}

// A trial's edit as the recipe spells it (key: from -> to), the lever
// beside it; the lever's label alone when the file changes are not known.
std::string edit_text(const Observation& o) {
  if (o.trial == 0) return "(the recipe as written)";
  if (o.edits.empty()) return o.proposal.label();
  std::string out;
  for (const std::string& e : o.edits) out += (out.empty() ? "" : "; ") + e;
  std::string levers;
  for (const DimensionChange& c : o.proposal.changes) levers += (levers.empty() ? "" : ", ") + c.dimension;
  return levers.empty() ? out : out + " [" + levers + "]";
}

std::string history_table(const std::vector<Observation>& history) {
  std::string out =
      "| trial | from | edit | outcome | tokens/s/GPU (95% interval) | step s | peak GiB | GPU-h | failure or reason |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& o : history) {
    std::string why = o.failure.empty() ? o.reason : o.failure + ": " + o.reason;
    if (why.size() > 240) why = why.substr(0, 240) + "...";
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {:.2f} | {} |\n", o.trial, o.parent,
                       edit_text(o), to_string(o.outcome),
                       throughput(o), opt(o.step_time_s, "{:.3f}"),
                       opt(o.peak_memory_gib, "{:.1f}"), o.gpu_hours, why);
  }
  return out;
}

std::string diagnosis_section(const diagnose::Diagnosis* d) {
  if (!d) return "No diagnosis of the incumbent yet.\n";
  nlohmann::json j = diagnose::to_json(*d);
  for (const char* bulky : {"loss", "steady_step_times_s", "timers"}) j.erase(bulky);
  return "```json\n" + j.dump(1) + "\n```\n";
}

std::string ranking_section(const std::vector<RankedCandidate>& ranking, const std::string& choice,
                            const std::string& stop) {
  std::string out = "## The rules' ranking (corrected model)\n\n";
  out += choice.empty() ? "The rules would stop: " + stop + "\n" : "The rules would propose: " + choice + "\n";
  int n = 0;
  for (const auto& c : ranking) {
    out += fmt::format("{}. {} — predicted {:+.1f}% ({}: {})\n", ++n, c.proposal.label(), 100 * c.predicted_gain,
                       c.proposal.rule, c.proposal.why);
  }
  return out;
}

}  // namespace

std::string llm_state_message(const PolicyContext& c, const std::vector<RankedCandidate>& ranking,
                              const std::string& rules_choice, const std::string& rules_stop) {
  const recipe::Hardware& hw = c.original.hardware();
  std::string out = fmt::format("# Campaign state: propose trial {}\n\n", c.trial);
  out += fmt::format("Framework {} · model {} · {} node(s) x {} {}\n", recipe::to_string(c.original.framework()),
                     c.original.model() ? c.original.model()->name : "unknown", hw.nodes, hw.gpus_per_node,
                     hw.gpu.empty() ? "GPU" : hw.gpu);
  out += fmt::format("Budget left {:.2f} GPU-hours · one more trial costs about {} · a candidate must beat the incumbent "
                     "by more than {:.1f}% (the measured noise)\n\n",
                     c.budget_left_gpu_hours,
                     c.trial_cost_gpu_hours > 0 ? fmt::format("{:.2f} GPU-hours", c.trial_cost_gpu_hours) : "unknown",
                     100 * c.min_gain);
  out += fmt::format("## Incumbent: trial {}, {:.0f} tokens/s/GPU measured\n\nPlan:\n```json\n{}\n```\n", c.incumbent_trial,
                     c.incumbent_tokens_per_s_per_gpu, recipe::to_json(c.incumbent.plan()).dump());
  const std::string diff = unified_diff(c.original.document().text(), c.incumbent.document().text(), "original", "incumbent");
  out += diff.empty() ? "It is the original recipe.\n\n" : "Diff from the original:\n```diff\n" + diff + "```\n\n";
  out += "## Trials so far\n\n" + history_table(c.history) + "\n";
  out += "## Latest diagnosis of the incumbent\n\n" + diagnosis_section(c.last_diagnosis) + "\n";
  if (!ranking.empty() || !rules_choice.empty() || !rules_stop.empty())
    out += ranking_section(ranking, rules_choice, rules_stop);
  return out;
}

}  // namespace attune::policy
