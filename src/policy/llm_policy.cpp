#include "attune/policy/llm_policy.h"

#include <fstream>

#include <fmt/format.h>

#include "attune/policy/admission.h"
#include "attune/policy/candidates.h"
#include "attune/policy/llm_tools.h"
#include "attune/sim/step_model.h"
#include "attune/sim/workload.h"
#include "attune/util/error.h"

namespace attune::policy {

namespace {

using nlohmann::json;

constexpr std::size_t kLogLineChars = 400;        // a read_log line is cut here
constexpr std::size_t kLogScanBytes = 64u << 20;  // and a log is searched this far

const char* kAnswerWithTools =
    "Answer with a tool call (propose, predict, read_log, read_profile or stop): text alone is not acted on.";

// Errors that waiting does not fix: the LLM policy ends on the first one.
bool permanent(llm::LlmErrorKind k) {
  return k == llm::LlmErrorKind::auth || k == llm::LlmErrorKind::quota || k == llm::LlmErrorKind::bad_request ||
         k == llm::LlmErrorKind::config;
}

llm::ToolResult result(const llm::ToolCall& call, std::string content, bool error) {
  return {call.id, std::move(content), error};
}

json calls_json(const std::vector<llm::ToolCall>& calls) {
  json out = json::array();
  for (const auto& c : calls) {
    out.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments.is_null() ? json(c.arguments_text) : c.arguments}});
  }
  return out;
}

json reply_json(const llm::ChatReply& r) {
  return {{"assistant", {{"text", r.message.text}, {"tool_calls", calls_json(r.message.tool_calls)}}},
          {"stop", r.stop_text},
          {"usage", {{"input_tokens", r.usage.input_tokens}, {"output_tokens", r.usage.output_tokens},
                     {"cache_write_tokens", r.usage.cache_write_tokens}, {"cache_read_tokens", r.usage.cache_read_tokens}}},
          {"request_id", r.request_id}};
}

json results_json(const std::vector<llm::ToolResult>& results) {
  json out = json::array();
  for (const auto& r : results) out.push_back({{"call_id", r.call_id}, {"content", r.content}, {"is_error", r.is_error}});
  return out;
}

std::string current_value(const recipe::Recipe& r, const std::string& lever) {
  try {
    if (auto v = r.value_or_default(lever)) return v->str();
  } catch (const std::exception&) {
  }
  if (auto e = r.find(lever)) return e->value.str();
  if (auto e = r.document().find(lever)) return e->value.str();
  return "unset";
}

std::string setting_of(const recipe::Recipe& r) {
  try {
    return setting_key(sim::workload_from_recipe(r));
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace

struct LlmPolicy::Round {
  std::vector<RankedCandidate> ranking;
  std::vector<std::string> proposed;   // this conversation's proposals, by label
  std::optional<Proposal> chosen;
  std::optional<Admission> admission;  // of `chosen`
  std::optional<std::string> stop_reason;
  json exchanges = json::array();
};

LlmPolicy::LlmPolicy(bool hybrid, LlmPolicySettings settings, std::unique_ptr<llm::LlmClient> client)
    : hybrid_(hybrid), settings_(std::move(settings)), client_(std::move(client)), tools_(llm_policy_tools(hybrid)) {
  if (!client_) {
    transport_ = std::make_unique<llm::CurlTransport>();
    environment_ = std::make_unique<llm::ProcessEnvironment>();
    sleeper_ = std::make_unique<llm::RealSleeper>();
    client_ = llm::make_llm_client(settings_.client, *transport_, *environment_, *sleeper_);
  }
  price_ = settings_.price ? settings_.price
                           : llm::list_price(client_->provider(), client_->model(), settings_.client.base_url);
}

LlmPolicy::~LlmPolicy() = default;

PolicyAnswer LlmPolicy::propose(const PolicyContext& c) {
  explain_ = nullptr;
  // The rules run every trial: their corrected model answers `predict`,
  // their ranking is hybrid's, and their answer stands in on a fault.
  const PolicyAnswer rules_answer = rules_.propose(c);
  if (fell_back()) return from_rules(rules_answer, "");
  if (system_prompt_.empty()) system_prompt_ = llm_system_prompt(c.original, c.lessons, hybrid_);
  Round round;
  if (hybrid_) {
    for (const auto& [p, gain] : rules_.ranking()) round.ranking.push_back({p, gain});
  }
  PolicyAnswer answer = converse(c, rules_answer, round);
  explain_ = {{"llm", {{"provider", client_->provider()}, {"model", client_->model()}, {"exchanges", round.exchanges}}},
              {"rules", rules_.explain()}};
  if (!system_journalled_) {
    explain_["llm"]["system_prompt"] = system_prompt_;
    system_journalled_ = true;
  }
  if (fell_back()) explain_["llm"]["fallback"] = fallback_reason_;
  return answer;
}

PolicyAnswer LlmPolicy::converse(const PolicyContext& c, const PolicyAnswer& rules_answer, Round& round) {
  const std::string rules_choice = rules_answer.proposal ? rules_answer.proposal->label() + " — " + rules_answer.proposal->why : "";
  std::vector<llm::Message> messages;
  messages.push_back({llm::Role::user,
                      llm_state_message(c, round.ranking, hybrid_ ? rules_choice : "", hybrid_ ? rules_answer.stop_reason : ""),
                      {}, {}, nullptr});
  round.exchanges.push_back({{"user", messages.back().text}});
  for (int r = 0; r < settings_.rounds_per_trial; ++r) {
    if (settings_.max_tokens > 0 && usage_.input_tokens + usage_.output_tokens >= settings_.max_tokens) {
      fall_back(fmt::format("the LLM has used the {} tokens --llm-max-tokens allows", settings_.max_tokens));
      return from_rules(rules_answer, fallback_reason_);
    }
    llm::ChatReply reply;
    try {
      reply = client_->chat({system_prompt_, messages, tools_, true, 2048, 0});
    } catch (const llm::LlmError& e) {
      round.exchanges.push_back({{"error", e.what()}});
      if (permanent(e.kind())) {
        fall_back(e.what());
        return from_rules(rules_answer, fallback_reason_);
      }
      return fault(c, rules_answer, e.what());
    }
    count(reply);
    round.exchanges.push_back(reply_json(reply));
    messages.push_back(reply.message);
    if (reply.message.tool_calls.empty()) {
      messages.push_back({llm::Role::user, kAnswerWithTools, {}, {}, nullptr});
      round.exchanges.push_back({{"user", kAnswerWithTools}});
      continue;
    }
    llm::Message answers{llm::Role::user, "", {}, {}, nullptr};
    for (const auto& call : reply.message.tool_calls) answers.tool_results.push_back(answer_call(c, call, round));
    round.exchanges.push_back({{"tool_results", results_json(answers.tool_results)}});
    if (round.chosen || round.stop_reason) {
      faults_in_a_row_ = 0;
      ++llm_trials_;
      if (round.chosen) return {round.chosen, "", std::move(round.admission)};
      return {std::nullopt, "the LLM stopped: " + *round.stop_reason};
    }
    messages.push_back(std::move(answers));
  }
  return fault(c, rules_answer, fmt::format("no valid proposal in {} rounds", settings_.rounds_per_trial));
}

PolicyAnswer LlmPolicy::fault(const PolicyContext& c, const PolicyAnswer& rules_answer, const std::string& why) {
  if (++faults_in_a_row_ >= settings_.max_faults) {
    fall_back(fmt::format("{} trials in a row without a valid proposal from the LLM (last: {})", faults_in_a_row_, why));
    return from_rules(rules_answer, fallback_reason_);
  }
  notes_.push_back(fmt::format("trial {}: the LLM gave no proposal ({}); the rules propose this one", c.trial, why));
  return from_rules(rules_answer, why);
}

PolicyAnswer LlmPolicy::from_rules(const PolicyAnswer& rules_answer, const std::string& why) {
  ++rules_trials_;
  PolicyAnswer a = rules_answer;
  if (a.proposal && !why.empty()) a.proposal->why = "(rules, for the LLM: " + why + ") " + a.proposal->why;
  return a;
}

void LlmPolicy::fall_back(const std::string& why) {
  fallback_reason_ = why;
  notes_.push_back("the LLM policy falls back to rules for the rest of the campaign: " + why);
}

void LlmPolicy::count(const llm::ChatReply& reply) {
  usage_.input_tokens += reply.usage.input_tokens;
  usage_.output_tokens += reply.usage.output_tokens;
  usage_.cache_write_tokens += reply.usage.cache_write_tokens;
  usage_.cache_read_tokens += reply.usage.cache_read_tokens;
  ++calls_;
}

std::vector<std::string> LlmPolicy::take_notes() {
  std::vector<std::string> out;
  out.swap(notes_);
  return out;
}

json LlmPolicy::usage() const {
  json u = {{"provider", client_->provider()},
            {"model", client_->model()},
            {"calls", calls_},
            {"input_tokens", usage_.input_tokens},
            {"output_tokens", usage_.output_tokens},
            {"cache_write_tokens", usage_.cache_write_tokens},
            {"cache_read_tokens", usage_.cache_read_tokens},
            {"trials_by_llm", llm_trials_},
            {"trials_by_rules", rules_trials_},
            {"cost_usd", price_ ? json(llm::cost_usd(*price_, usage_)) : json(nullptr)},
            {"fallback", fallback_reason_.empty() ? json(nullptr) : json(fallback_reason_)}};
  if (!price_) u["cost_note"] = "no price known for this model: pass --llm-price IN,OUT (US dollars per million tokens)";
  return u;
}

llm::ToolResult LlmPolicy::answer_call(const PolicyContext& c, const llm::ToolCall& call, Round& round) {
  if (auto why = check_tool_call(call, tools_)) return result(call, "invalid call: " + *why, true);
  if (round.chosen || round.stop_reason) return result(call, "not acted on: this turn already ended the trial", true);
  if (call.name == "propose") return answer_propose(c, call, round);
  if (call.name == "predict") return answer_predict(c, call);
  if (call.name == "read_log") return answer_read_log(c, call);
  if (call.name == "read_profile") {
    const int trial = call.arguments.at("trial").get<int>();
    const json profile = c.trial_profile ? c.trial_profile(trial) : json(nullptr);
    if (profile.is_null()) return result(call, fmt::format("trial {} has no profile", trial), true);
    return result(call, profile.dump(), false);
  }
  round.stop_reason = call.arguments.at("reason").get<std::string>();
  return result(call, "stopping", false);
}

std::optional<Proposal> LlmPolicy::proposal_for(const PolicyContext& c, const json& args, std::string& why) const {
  const std::string lever = args.at("lever_or_key").get<std::string>();
  if (hybrid_ && lever == "candidate") {
    const json& v = args.at("value");
    const long n = v.is_number() ? v.get<long>() : std::atol(value_text(v).c_str());
    const auto& ranking = rules_.ranking();
    if (n < 1 || n > static_cast<long>(ranking.size())) {
      why = fmt::format("there is no candidate {} (the ranking has {})", value_text(v), ranking.size());
      return std::nullopt;
    }
    return ranking[static_cast<std::size_t>(n - 1)].first;
  }
  const std::string value = value_text(args.at("value"));
  Proposal p;
  p.changes.push_back({lever, current_value(c.incumbent, lever), value, {{lever, value}}});
  p.rule = name();
  p.stage = "llm";
  if (args.contains("rationale")) {
    p.why = args.at("rationale").get<std::string>();
    if (args.contains("expected_effect")) p.why += " (expected: " + args.at("expected_effect").get<std::string>() + ")";
  }
  return p;
}

llm::ToolResult LlmPolicy::answer_propose(const PolicyContext& c, const llm::ToolCall& call, Round& round) {
  std::string why;
  std::optional<Proposal> p = proposal_for(c, call.arguments, why);
  if (!p) return result(call, why, true);
  for (const auto& label : round.proposed) {
    if (label == p->label()) return result(call, "repeated: you proposed it already in this conversation", true);
  }
  Admission a = admit(*p, c.incumbent, c.original, c.gate, c.history);
  switch (a.kind) {
    case AdmissionKind::Unrunnable:
      return result(call, "cannot apply: " + a.why + " (an unknown lever or key, or a value it cannot take)", true);
    case AdmissionKind::NoChange: return result(call, a.why, true);
    case AdmissionKind::Repeat: {
      for (const Observation& o : c.history) {
        if (o.trial == a.repeat_of)
          return result(call, fmt::format("repeated: trial {} tried it ({}{})", o.trial, to_string(o.outcome),
                                          o.reason.empty() ? "" : ": " + o.reason), true);
      }
      return result(call, "repeated: " + a.why, true);
    }
    case AdmissionKind::Refused: return result(call, "the gate refuses it: " + a.why, true);
    case AdmissionKind::Admitted: break;
  }
  p->setting = setting_of(*a.edited);
  round.proposed.push_back(p->label());
  round.chosen = std::move(p);
  round.admission = std::move(a);
  return result(call, fmt::format("accepted as trial {}: {}", c.trial, round.chosen->label()), false);
}

llm::ToolResult LlmPolicy::answer_predict(const PolicyContext& c, const llm::ToolCall& call) {
  std::string why;
  std::optional<Proposal> p = proposal_for(c, call.arguments, why);
  if (!p) return result(call, why, true);
  std::optional<recipe::Recipe> edited = apply_proposal(c.incumbent, *p, why);
  if (!edited) return result(call, "cannot apply: " + why, true);
  try {
    const sim::Perturbation pert = rules_.correction().perturbation();
    const sim::Prediction p0 = sim::predict(sim::workload_from_recipe(c.incumbent), pert, sim::Detail::Full);
    const sim::Prediction p1 = sim::predict(sim::workload_from_recipe(*edited), pert, sim::Detail::Full);
    const gate::Verdict v = c.gate.check(c.original, *edited);
    json out = {{"edit", p->label()},
                {"fits", p1.ok && p1.oom_risk == 0},
                {"failure", p1.failure},
                {"predicted_tokens_per_s_per_gpu", p1.tokens_per_s_per_gpu},
                {"incumbent_predicted_tokens_per_s_per_gpu", p0.tokens_per_s_per_gpu},
                {"predicted_gain_pct", p0.ok && p1.ok && p0.tokens_per_s_per_gpu > 0
                                           ? json(100 * (p1.tokens_per_s_per_gpu / p0.tokens_per_s_per_gpu - 1))
                                           : json(nullptr)},
                {"memory_gib", p1.memory.total_gib},
                {"gpu_memory_gib", p1.hbm_gib},
                {"gate", v.allowed ? "allowed" : "refused"}};
    if (!p1.error.empty()) out["error"] = p1.error;
    if (!v.allowed) {
      for (const auto& r : v.reasons) out["gate_reasons"].push_back(r.message);
    }
    return result(call, out.dump(), false);
  } catch (const InputError& e) {
    return result(call, "the performance model cannot read the edited recipe: " + e.message(), true);
  }
}

llm::ToolResult LlmPolicy::answer_read_log(const PolicyContext& c, const llm::ToolCall& call) const {
  const int trial = call.arguments.at("trial").get<int>();
  const std::string pattern = call.arguments.at("pattern").get<std::string>();
  const int max_lines = call.arguments.value("max_lines", 50);
  const std::vector<std::string> logs = c.trial_logs ? c.trial_logs(trial) : std::vector<std::string>{};
  if (logs.empty()) return result(call, fmt::format("trial {} has no run log", trial), true);
  std::string out;
  int found = 0;
  for (std::size_t k = 0; k < logs.size() && found < max_lines; ++k) {
    std::ifstream in(logs[k], std::ios::binary);
    std::string line;
    std::size_t scanned = 0;
    for (long n = 1; found < max_lines && scanned < kLogScanBytes && std::getline(in, line); ++n) {
      scanned += line.size() + 1;
      if (line.find(pattern) == std::string::npos) continue;
      if (line.size() > kLogLineChars) line = line.substr(0, kLogLineChars) + "...";
      out += fmt::format("run {} line {}: {}\n", k + 1, n, line);
      ++found;
    }
  }
  if (found == 0) return result(call, fmt::format("no line of trial {}'s logs contains '{}'", trial, pattern), false);
  return result(call, out, false);
}

}  // namespace attune::policy
