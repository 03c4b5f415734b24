#include "attune/recipe/plan.h"

namespace attune::recipe {

nlohmann::json to_json(const Plan& p) {
  return {
      {"world", p.world},       {"nodes", p.nodes},
      {"gpus_per_node", p.gpus_per_node},
      {"world_source", p.world_source},
      {"tp", p.tp},             {"pp", p.pp},
      {"vp", p.vp},             {"cp", p.cp},
      {"ep", p.ep},             {"etp", p.etp},
      {"dp", p.dp},             {"dp_shard", p.dp_shard},
      {"mbs", p.mbs},           {"gbs", p.gbs},
      {"grad_accum", p.grad_accum},
      {"seq_len", p.seq_len},   {"tokens_per_step", p.tokens_per_step},
      {"gbs_rule", p.gbs_rule}, {"recompute", p.recompute},
      {"precision", p.precision},
  };
}

}  // namespace attune::recipe
