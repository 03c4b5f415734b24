#include "adapters.h"

#include <algorithm>

namespace attune::recipe {

std::string TorchtitanAdapter::precision(const Recipe& recipe) const {
  auto conv = recipe.find_named("fp8");
  if (conv) {
    for (const auto& item : conv->value.items) {
      if (item.text == "float8") return "fp8";
      if (item.text == "mx") return "mxfp8";
    }
  }
  std::string param = value_text(recipe.find_named("precision"));
  return param == "float32" ? "fp32" : "bf16";
}

void TorchtitanAdapter::derive_dp(const Layout& l, Plan& p) const {
  // data_parallel_shard_degree = -1 takes what the other degrees leave.
  int rest = std::max(1, l.dp_replicate * l.cp * l.tp * l.pp);
  int shard = l.dp_shard > 0 ? l.dp_shard : std::max(1, p.world / rest);
  p.dp = std::max(1, l.dp_replicate) * shard;
}

void TorchtitanAdapter::framework_rules(const Recipe& recipe, const Plan& p, std::vector<RuleViolation>& out) const {
  Layout l = read_layout(recipe);
  long long rest = static_cast<long long>(std::max(1, l.dp_replicate)) * p.cp * p.tp * p.pp;
  long long shard = l.dp_shard > 0 ? l.dp_shard : p.world / std::max(1LL, rest);
  add_rule(recipe, out, rest > 0 && shard * rest == p.world, "world-equals-degrees", "dp_shard",
           "dp_replicate*dp_shard*cp*tp*pp = " + std::to_string(shard * rest) + " must equal the world size " +
               std::to_string(p.world));
  if (p.pp > 1) {
    auto micro = recipe.find_named("pp_microbatch");
    long long m = micro && micro->value.as_int() ? *micro->value.as_int() : 1;
    add_rule(recipe, out, m > 0 && p.mbs % m == 0, "pp-microbatch-divides-local-batch", "pp_microbatch",
             "local_batch_size " + std::to_string(p.mbs) + " must be divisible by pipeline_parallel_microbatch_size " +
                 std::to_string(m));
  }
  if (p.ep > 1) {
    long long group = shard * p.cp * p.tp;
    add_rule(recipe, out, group % (static_cast<long long>(p.etp) * p.ep) == 0, "ep-divides-fsdp-group", "ep",
             "dp_shard*cp*tp = " + std::to_string(group) + " must be divisible by etp*ep = " +
                 std::to_string(p.etp * p.ep));
    add_rule(recipe, out, p.etp == 1 || p.etp == p.tp, "etp-one-or-tp", "etp",
             "expert_tensor_parallel_degree must be 1 or equal to tensor_parallel_degree");
  }
}

}  // namespace attune::recipe
