#include "adapters.h"

#include <algorithm>

#include "attune/util/error.h"

namespace attune::recipe {

std::string TorchtitanAdapter::edit_lever(const Recipe& recipe, const std::string& name) const {
  // With PP the micro batch is the pipeline micro-batch size: `mbs` edits it,
  // which keeps the local and the global batch.
  return pipeline_mbs_lever(*this, recipe, name);
}

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

namespace {

constexpr const char* kPython = "python";  // the Python-config generation (dialect)

// The Python configs count the batch in tokens: a micro-batch of
// num_tokens_per_microbatch_per_dp_rank tokens is that many samples of
// max_context_length tokens. A count that is no whole number of samples is
// not read as one: the plan says it is unknown.
void tokens_to_samples(const Recipe& recipe, Layout& l) {
  if (l.seq_len <= 0) return;
  if (l.mbs % l.seq_len == 0) {
    l.mbs = static_cast<int>(l.mbs / l.seq_len);
  } else {
    l.unknown["mbs"] = std::to_string(l.mbs) + " tokens, not a whole number of " + std::to_string(l.seq_len) +
                       "-token samples";
    l.mbs = 1;
  }
  if (l.gbs && *l.gbs % l.seq_len == 0) {
    l.gbs = *l.gbs / l.seq_len;
  } else if (l.gbs) {
    l.unknown["gbs"] = std::to_string(*l.gbs) + " tokens, not a whole number of " + std::to_string(l.seq_len) +
                       "-token samples";
    l.gbs.reset();
  }
  // With PP each DP rank takes num_pp_microbatches micro-batches per pass.
  if (l.pp > 1) {
    auto n = recipe.find_named("num_pp_microbatches");
    const long long count = n && n->value.as_int() && *n->value.as_int() > 0 ? *n->value.as_int() : 1;
    l.local_batch = static_cast<int>(l.mbs * count);
  }
}

long long context_length(const Recipe& recipe) {
  auto e = recipe.find_named("seq_len");
  if (e && e->value.as_int() && *e->value.as_int() > 0) return *e->value.as_int();
  throw InputError({recipe.config_path(), e ? e->line : 0, 0}, "training.max_context_length",
                   "the batch is counted in tokens, but the recipe's max_context_length is not a known number of "
                   "tokens");
}

}  // namespace

Layout TorchtitanAdapter::read_layout(const Recipe& recipe) const {
  Layout l = Adapter::read_layout(recipe);
  if (recipe.dialect() == kPython) {
    tokens_to_samples(recipe, l);
    return l;
  }
  // With PP, training.local_batch_size is split into micro-batches of
  // parallelism.pipeline_parallel_microbatch_size (default 1).
  split_pipeline_batch(recipe, l);
  return l;
}

Value TorchtitanAdapter::document_count(const Recipe& recipe, const std::string& name, long long count) const {
  if (recipe.dialect() == kPython && (name == "mbs" || name == "gbs")) return Value::integer(count * context_length(recipe));
  return Value::integer(count);
}

std::vector<Change> TorchtitanAdapter::translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const {
  std::vector<Change> out = Adapter::translate(recipe, lever, value);
  // `mbs 2` is two samples: the Python configs' key counts their tokens.
  if (recipe.dialect() == kPython && lever.name == "mbs" && out.size() == 1 && out[0].new_value &&
      out[0].new_value->as_int())
    out[0].new_value = document_count(recipe, "mbs", *out[0].new_value->as_int());
  return out;
}

namespace {
// data_parallel_shard_degree = -1 takes what the other degrees leave.
int shard_degree(const Layout& l, int world) {
  int rest = std::max(1, std::max(1, l.dp_replicate) * l.cp * l.tp * l.pp);
  return l.dp_shard > 0 ? l.dp_shard : std::max(1, world / rest);
}
}  // namespace

void TorchtitanAdapter::derive_dp(const Layout& l, Plan& p) const {
  p.dp = std::max(1, l.dp_replicate) * shard_degree(l, p.world);
}

int TorchtitanAdapter::shard_group(const Recipe&, const Layout& l, const Plan& p) const {
  // FSDP2 shards over data_parallel_shard_degree (HSDP replicates across
  // data_parallel_replicate_degree groups of that size).
  return shard_degree(l, p.world);
}

void TorchtitanAdapter::framework_rules(const Recipe& recipe, const Plan& p, std::vector<RuleViolation>& out) const {
  Layout l = read_layout(recipe);
  long long rest = static_cast<long long>(std::max(1, l.dp_replicate)) * p.cp * p.tp * p.pp;
  long long shard = l.dp_shard > 0 ? l.dp_shard : p.world / std::max(1LL, rest);
  add_rule(recipe, out, rest > 0 && shard * rest == p.world, "world-equals-degrees", "dp_shard",
           "dp_replicate*dp_shard*cp*tp*pp = " + std::to_string(shard * rest) + " must equal the world size " +
               std::to_string(p.world));
  if (p.pp > 1) {
    long long local = l.local_batch > 0 ? l.local_batch : p.mbs;
    long long m = p.mbs;  // the pipeline micro-batch size
    // (The Python configs give the count of micro-batches: local = m * count.)
    add_rule(recipe, out, m > 0 && local % m == 0, "pp-microbatch-divides-local-batch", "pp_microbatch",
             "local_batch_size " + std::to_string(local) + " must be divisible by pipeline_parallel_microbatch_size " +
                 std::to_string(m));
    long long per_pass = local * p.dp;
    add_rule(recipe, out, per_pass > 0 && p.gbs % per_pass == 0, "gbs-divisible-by-local-batch", "gbs",
             "global_batch_size " + std::to_string(p.gbs) + " must be divisible by local_batch_size*dp = " +
                 std::to_string(local) + "*" + std::to_string(p.dp) + " = " + std::to_string(per_pass));
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
