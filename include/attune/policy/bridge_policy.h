// BridgePolicy: the baselines a Python tuning library drives, over the same
// space as the other baselines (CandidateSpace: what the recipe can spell and
// the gate does not refuse on its own), each dimension a categorical
// parameter:
//  - `optuna`: Optuna's TPE sampler through its ask/tell interface;
//  - `xgb`: DeepSpeed Autotuning's model-based tuner, an XGBoost cost model
//    fitted on the measured trials, the next trial its best unmeasured setting.
// The library runs in a child process (tools/tuner_bridge.py --method ...)
// spoken to in JSON lines. On every propose() the study is rebuilt from the
// history — each measured trial told with its tokens/s/GPU, each failed,
// refused or unrunnable one as PRUNED — and sampled with a seed drawn from the
// campaign seed and the trial number, so a resumed campaign asks the same
// questions and gets the same answers. An asked setting is completed into a
// legal one (one-lever moves from the recipe's own setting, dimension by
// dimension; what cannot be reached stays as it was); one already tried, or
// that the recipe cannot spell, is told back (its measured value, or PRUNED)
// and the library asked again, up to a bound.
//
// Where things are found: the interpreter is $ATTUNE_PYTHON, else Debian's
// /usr/bin/python3 where it exists, else python3 on PATH; the script is in
// $ATTUNE_TOOLS_DIR, else the tools/ folder of the source tree attune was
// built from. A missing interpreter, script or module,
// and a bridge that dies, times out or answers nonsense, are InputErrors
// naming the policy's flag and what to do. A bridge outlives its policy: the
// next policy of the same method takes it over (the study rebuilt as always).
#pragma once

#include <memory>
#include <string>

#include "attune/policy/candidates.h"
#include "attune/policy/policy.h"

namespace attune {
class ChildProcess;
}

namespace attune::policy {

enum class BridgeMethod { Tpe, Xgb };

struct BridgeSettings {
  std::string python;           // the interpreter; "" = $ATTUNE_PYTHON, else python3
  std::string tools_dir;        // the folder holding tuner_bridge.py; "" = $ATTUNE_TOOLS_DIR, else the source tree's tools/
  double answer_timeout_s = 60; // per answer of the bridge (its start-up included)
  int max_asks = 64;            // per proposal, before giving up on finding an untried setting
};

// One categorical parameter: a dimension of the simulator's setting and the
// values it may take (the recipe's own first).
struct BridgeDimension {
  std::string name;
  std::vector<std::string> choices;
};

class BridgePolicy : public Policy {
 public:
  // Starts the bridge and waits for it to be ready; InputError (naming
  // `flag`) when it cannot (no interpreter, script or module).
  explicit BridgePolicy(BridgeMethod method, BridgeSettings settings = {}, std::string flag = "--policy");
  ~BridgePolicy() override;

  std::string name() const override;  // "optuna" | "xgb"
  PolicyAnswer propose(const PolicyContext& context) override;
  nlohmann::json explain() const override { return explain_; }

 private:
  void start();
  nlohmann::json request(const nlohmann::json& message);
  [[noreturn]] void fail(const std::string& what);

  BridgeMethod method_;
  BridgeSettings settings_;
  std::string flag_;
  std::unique_ptr<ChildProcess> child_;
  std::string pool_key_;                     // the interpreter, script and method: which idle bridges can serve
  std::unique_ptr<CandidateSpace> space_;
  std::vector<BridgeDimension> dimensions_;  // what the space lets move, found once
  nlohmann::json explain_;
};

// The categorical parameters of a space: every dimension that the one- and
// two-lever moves from the base setting give another value.
std::vector<BridgeDimension> bridge_dimensions(const CandidateSpace& space);

}  // namespace attune::policy
