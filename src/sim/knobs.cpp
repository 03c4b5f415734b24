#include "attune/sim/knobs.h"

#include <algorithm>

namespace attune::sim {

namespace {

struct ChoiceDef {
  std::string_view name;
  std::vector<std::string_view> values;
  std::uint8_t default_value;
};

const std::array<ChoiceDef, kChoiceCount>& defs() {
  static const std::array<ChoiceDef, kChoiceCount> d = {{
      {"attention", {"fused", "flash", "flash3", "sdpa", "flex", "unfused"}, attention::kFused},
      {"compile", {"off", "on"}, 1},
      {"cuda_graphs", {"none", "layers", "full"}, cuda_graphs::kNone},
      {"nvls", {"on", "off"}, 0},
      {"nccl_algo", {"auto", "ring", "tree"}, nccl_algo::kAuto},
      {"nccl_proto", {"auto", "simple", "ll", "ll128"}, nccl_proto::kAuto},
      {"nccl_channels", {"auto", "4", "16", "32"}, nccl_channels::kAuto},
      {"bucket", {"default", "small", "large"}, bucket::kDefault},
      {"max_connections", {"unset", "1", "32"}, max_connections::kUnset},
      {"workers", {"0", "1", "2", "4", "8"}, workers::k2},
      {"dispatcher", {"alltoall", "allgather", "deepep"}, dispatcher::kAllToAll},
      {"cp_comm", {"p2p", "all_gather", "a2a"}, cp_comm::kP2p},
      {"expandable_segments", {"off", "on"}, 0},
      {"overlap_grad_reduce", {"false", "true"}, 1},
      {"overlap_param_gather", {"false", "true"}, 1},
      {"tp_comm_overlap", {"false", "true"}, 0},
  }};
  return d;
}

const ChoiceDef& def(Choice c) { return defs()[static_cast<std::size_t>(c)]; }

}  // namespace

std::string_view choice_name(Choice c) { return def(c).name; }

const std::vector<std::string_view>& choice_values(Choice c) { return def(c).values; }

std::optional<Choice> choice_by_name(std::string_view name) {
  for (std::size_t i = 0; i < kChoiceCount; ++i) {
    if (defs()[i].name == name) return static_cast<Choice>(i);
  }
  return std::nullopt;
}

std::optional<std::uint8_t> choice_value(Choice c, std::string_view value) {
  const auto& v = def(c).values;
  const auto it = std::find(v.begin(), v.end(), value);
  if (it == v.end()) return std::nullopt;
  return static_cast<std::uint8_t>(it - v.begin());
}

int worker_count(std::uint8_t value) {
  static constexpr int kCounts[] = {0, 1, 2, 4, 8};
  return kCounts[std::min<std::size_t>(value, std::size(kCounts) - 1)];
}

std::uint8_t workers_value(long long count) {
  std::uint8_t best = 0;
  for (std::uint8_t v = 0; v < 5; ++v) {
    if (worker_count(v) <= count) best = v;
  }
  return best;
}

std::array<std::uint8_t, kChoiceCount> Knobs::default_choices() {
  std::array<std::uint8_t, kChoiceCount> a{};
  for (std::size_t i = 0; i < kChoiceCount; ++i) a[i] = defs()[i].default_value;
  return a;
}

namespace recompute_module {

const std::vector<Name>& names() {
  static const std::vector<Name> n = {
      {kCoreAttn, "core_attn"}, {kMlp, "mlp"}, {kMoeAct, "moe_act"}, {kLayerNorm, "layernorm"}, {kMlaUpProj, "mla_up_proj"}};
  return n;
}

unsigned bit_of(std::string_view name) {
  for (const Name& n : names()) {
    if (n.name == name) return n.bit;
  }
  return 0;
}

std::string text_of(unsigned modules, std::string_view separator) {
  std::string out;
  for (const Name& n : names()) {
    if (!(modules & n.bit)) continue;
    if (!out.empty()) out += separator;
    out += n.name;
  }
  return out;
}

}  // namespace recompute_module

}  // namespace attune::sim
