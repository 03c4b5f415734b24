// LlmPolicy: `--policy llm` and `--policy hybrid`. Each trial it opens a
// conversation with a model (llm::LlmClient) whose system prompt is the skill
// and whose first message is the whole campaign state (llm_prompt.h), and
// answers its tool calls (llm_tools.h) until it proposes an edit that applies
// to the incumbent, is not a repeat and that the gate allows — a refusal,
// an unknown lever, a repeat or a malformed call goes back to the model as
// that call's result, with its id. `predict` answers from the rules' corrected
// model, free of GPU time. In hybrid mode the rules' ranking is in the state
// and the model may take a ranked candidate or propose outside it.
//
// Faults never stop a campaign. A trial the model gives no valid proposal
// for within its rounds, or whose provider stays down past the retries, is
// proposed by the rules instead; after `max_faults` such trials in a row, a
// provider error that waiting cannot fix (a bad key, a quota, an unknown
// model) or the token limit, the rules propose every trial after, and the
// policy says so (take_notes) in the status line, the journal and the
// summary. Every exchange is kept for the journal (explain) without secrets.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attune/llm/llm_client.h"
#include "attune/llm/price_table.h"
#include "attune/policy/llm_prompt.h"
#include "attune/policy/policy.h"
#include "attune/policy/rules_policy.h"

namespace attune::policy {

class LlmPolicy : public Policy {
 public:
  // With `client` null the policy makes the real one from settings (libcurl,
  // the process environment, real waits).
  LlmPolicy(bool hybrid, LlmPolicySettings settings, std::unique_ptr<llm::LlmClient> client = nullptr);
  ~LlmPolicy() override;

  std::string name() const override { return hybrid_ ? "hybrid" : "llm"; }
  PolicyAnswer propose(const PolicyContext& context) override;
  nlohmann::json explain() const override { return explain_; }
  std::vector<std::string> take_notes() override;
  nlohmann::json usage() const override;

  bool fell_back() const { return !fallback_reason_.empty(); }

 private:
  struct Round;   // one propose(): the conversation and what came of it

  PolicyAnswer converse(const PolicyContext& context, const PolicyAnswer& rules_answer, Round& round);
  llm::ToolResult answer_call(const PolicyContext& context, const llm::ToolCall& call, Round& round);
  llm::ToolResult answer_propose(const PolicyContext& context, const llm::ToolCall& call, Round& round);
  llm::ToolResult answer_predict(const PolicyContext& context, const llm::ToolCall& call);
  llm::ToolResult answer_read_log(const PolicyContext& context, const llm::ToolCall& call) const;
  std::optional<Proposal> proposal_for(const PolicyContext& context, const nlohmann::json& args, std::string& why) const;
  PolicyAnswer fault(const PolicyContext& context, const PolicyAnswer& rules_answer, const std::string& why);
  PolicyAnswer from_rules(const PolicyAnswer& rules_answer, const std::string& why);
  void fall_back(const std::string& why);
  void count(const llm::ChatReply& reply);

  bool hybrid_;
  LlmPolicySettings settings_;
  std::unique_ptr<llm::HttpTransport> transport_;
  std::unique_ptr<llm::Environment> environment_;
  std::unique_ptr<llm::Sleeper> sleeper_;
  std::unique_ptr<llm::LlmClient> client_;
  std::optional<llm::TokenPrice> price_;
  RulesPolicy rules_;
  std::vector<llm::ToolSpec> tools_;
  std::string system_prompt_;
  bool system_journalled_ = false;
  int faults_in_a_row_ = 0;
  std::string fallback_reason_;
  llm::Usage usage_;
  int calls_ = 0;
  int llm_trials_ = 0, rules_trials_ = 0;
  std::vector<std::string> notes_;
  nlohmann::json explain_;
};

}  // namespace attune::policy
