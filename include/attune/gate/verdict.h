// Verdict: what the correctness gate decided about a candidate recipe and why —
// one line per changed key (allowed as which lever, or refused by which rule),
// the reasons for a refusal, and the derived invariants before and after.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/recipe/value.h"

namespace attune::gate {

// How one changed key was judged.
enum class ChangeStatus {
  Lever,      // a throughput-only lever of the framework's catalog
  OptedIn,    // a numerics change the user allowed by name (--allow)
  FollowUp,   // a key that may change only as a follow-up, and the invariants held
  AllowedKey, // allowed by --allow-key
  Parity,     // unknown key run under --unknown-keys parity: accepted only after loss parity
  Refused,
};
std::string to_string(ChangeStatus s);

struct KeyChange {
  std::string key;                          // catalog-key spelling (e.g. --global-batch-size, env.NCCL_ALGO)
  std::optional<recipe::Value> old_value;   // nullopt: added
  std::optional<recipe::Value> new_value;   // nullopt: removed
  std::string lever;                        // catalog lever name, when there is one
  ChangeStatus status = ChangeStatus::Refused;
  std::string rule;                         // rule that decided (refusals, opt-ins)
  std::string reason;                       // plain words
};

struct RefusalReason {
  std::string rule;
  std::string key;
  std::string message;
};

struct Verdict {
  bool allowed = false;
  bool requires_parity = false;            // --unknown-keys parity let an unknown key through
  std::vector<KeyChange> changes;
  std::vector<RefusalReason> reasons;      // empty when allowed
  std::vector<std::string> warnings;       // benchmark-only settings present, data-order notes...
  // invariant name -> (before, after), as text with units where they apply
  std::vector<std::pair<std::string, std::pair<std::string, std::string>>> invariants;
};

nlohmann::json to_json(const Verdict& v);

}  // namespace attune::gate
