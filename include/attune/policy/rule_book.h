// RuleBook: the rules policy's expert knowledge as data (skills/rules.yaml,
// compiled in): when the diagnosis of the incumbent shows X, try lever Y in
// direction Z — grouped in the experts' order (fix failures, fit memory,
// exposed communication, pipeline bubble, kernels and runtime, layout) — and
// the levers that may move together because one alone cannot pay off.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace attune::policy {

struct RuleCondition {
  std::optional<std::string> failure;     // the last run failed this way (a diagnoser class)
  std::optional<double> headroom_gib_at_least, headroom_gib_below;
  std::optional<double> exposed_comm_share_at_least, bubble_share_at_least;
  std::optional<bool> launch_bound, moe;
  std::optional<int> pp_at_least, tp_at_least, cp_at_least;
};

struct Rule {
  std::string id;
  std::string stage;
  std::string lever;       // a dimension the simulator names
  std::string direction;   // up | down | on | off | any
  RuleCondition when;
  std::string why;
  std::vector<std::string> acts_on;  // parts of the step (StepBreakdown's) the lever can shorten
  int line = 0;
};

struct LeverCombination {
  std::vector<std::string> levers;
  std::string why;
};

// What the rules test, from the incumbent's diagnosis and its prediction.
struct RuleEvidence {
  std::string failure;                    // "" = the last run did not fail
  std::optional<double> headroom_gib;     // HBM left at the measured (else predicted) peak
  double exposed_comm_share = 0;          // exposed communication / step
  double bubble_share = 0;
  double launch_share = 0;                // launch-bound and host work / step
  bool moe = false;
  int pp = 1, tp = 1, cp = 1;
};

struct RuleBook {
  double tie_margin = 0.005;
  std::vector<std::string> stages;
  std::vector<Rule> rules;
  std::vector<LeverCombination> combinations;

  // Position of a stage in the experts' order (stages.size() when unknown).
  int stage_rank(const std::string& stage) const;
  // The first rule for this move whose conditions hold, or nullptr.
  const Rule* match(const std::string& dimension, const std::string& from, const std::string& to,
                    const RuleEvidence& evidence) const;
  // The combination that allows these dimensions to move together, or nullptr.
  const LeverCombination* combination_for(const std::vector<std::string>& dimensions) const;
};

// skills/rules.yaml as compiled in.
const RuleBook& builtin_rule_book();
// InputError naming `name`, the line and the key for a malformed book.
RuleBook parse_rule_book(const std::string& name, const std::string& yaml_text);

bool holds(const RuleCondition& c, const RuleEvidence& e);
// The parts of the step a rule's acts_on may name (StepBreakdown's, without _s).
const std::vector<std::string>& step_parts();
// Whether moving from `from` to `to` goes `direction` (numbers compare as
// numbers; none < selective < full, off < on, false < true, zero-N by N).
bool goes(const std::string& direction, const std::string& from, const std::string& to);

}  // namespace attune::policy
