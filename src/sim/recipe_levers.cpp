#include "attune/sim/recipe_levers.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "attune/recipe/recipe.h"
#include "attune/util/error.h"
#include "attune/util/text.h"

namespace attune::sim {

namespace {

using recipe::Framework;
using recipe::LeverDef;
using recipe::LeverType;
using recipe::Recipe;

// ---------------------------------------------------------------- reading

std::optional<bool> flag(const Recipe& r, const char* name) {
  auto v = r.value_or_default(name);
  if (!v) return std::nullopt;
  return v->as_bool();
}

std::string text(const Recipe& r, const char* name) {
  auto e = r.find_named(name);
  return e ? e->value.str() : "";
}

std::string lower_text(const Recipe& r, const char* name) { return to_lower(text(r, name)); }

bool has_lever(const Recipe& r, const char* name) { return !r.key_of(name).empty(); }

const LeverDef* lever_def(const Recipe& r, const std::string& name) {
  return r.adapter().catalog().by_name(name, r.dialect());
}

// Environment variables live in the file (a script's exports, a YAML's env
// section) or, for frameworks whose file has none, in the wrapper's
// launch.env; the file's value wins, as the launch applies it last.
bool env_in_file(const Recipe& r) { return r.adapter().catalog().env_root != "-"; }

std::optional<std::string> env_value(const Recipe& r, const std::string& name) {
  if (env_in_file(r)) {
    if (auto e = r.find("env." + name)) return e->value.str();
  }
  const auto& env = r.launch().env;
  if (auto it = env.find(name); it != env.end()) return it->second;
  return std::nullopt;
}

bool uneven_split(const Recipe& r) {
  for (const char* name : {"decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers",
                           "num_layers_in_first_pipeline_stage", "num_layers_in_last_pipeline_stage",
                           "pipeline_model_parallel_layout", "pp_first_stage_less_layers",
                           "pp_last_stage_less_layers", "pp_layers_per_stage"}) {
    if (r.find_named(name)) return true;
  }
  return false;
}

unsigned module_bits(const recipe::Value& v) {
  using namespace recompute_module;
  unsigned bits = 0;
  std::vector<std::string> names;
  if (v.kind == recipe::ValueKind::List) {
    for (const auto& i : v.items) names.push_back(to_lower(i.str()));
  } else {
    // "core_attn mlp" (argparse nargs), "[core_attn, mlp]", "core_attn,mlp"
    std::string text = to_lower(v.str());
    for (char& c : text) {
      if (c == '[' || c == ']' || c == ',' || c == '"' || c == '\'') c = ' ';
    }
    for (auto& s : split(text, ' ')) {
      if (!trim(s).empty()) names.emplace_back(trim(s));
    }
  }
  for (const auto& n : names) bits |= bit_of(n);
  return bits ? bits : kCoreAttn;
}

void read_recompute(const Recipe& r, const recipe::Plan& plan, Knobs& k) {
  const std::string rc = plan.recompute;
  if (rc == "full" || rc == "selective" || rc == "none") k.recompute_granularity = rc;
  else if (!rc.empty() && rc != "false") k.recompute_granularity = "selective";
  // Megatron's uniform method recomputes every layer, N at a time; only the
  // block method limits recompute to the first N layers of a stage.
  if (auto e = r.find_named("recompute_layers"); e && lower_text(r, "recompute_method") == "block")
    k.recompute_num_layers = static_cast<int>(e->value.as_int().value_or(0));
  if (auto e = r.find_named("recompute_modules")) k.recompute_modules = module_bits(e->value);
  if (r.framework() == Framework::Torchtitan && k.recompute_granularity == "selective") {
    // torchtitan's selective mode is per-op ("op") or every N-th layer in full.
    const std::string option = text(r, "selective_ac_option").empty() ? "2" : text(r, "selective_ac_option");
    if (to_lower(option) == "op") {
      k.per_op_selective = true;
    } else if (const auto n = recipe::Value::parse(option).as_int(); n && *n > 0) {
      k.recompute_granularity = "full";
      k.recompute_num_layers = -static_cast<int>(*n);  // negative: every N-th layer, resolved in read_knobs
    }
  }
}

void read_offload(const Recipe& r, Knobs& k) {
  const Framework f = r.framework();
  auto on = [&](const char* name) { return flag(r, name).value_or(false); };
  switch (f) {
    case Framework::Megatron:
      if (auto e = r.find_named("offload")) k.offload_layers = static_cast<int>(e->value.as_int().value_or(0));
      break;
    case Framework::Bridge:
      if (on("offload")) k.offload_layers = -1;
      break;
    case Framework::HyperPod:
      if (r.dialect() == "smp" && on("offload")) k.offload_layers = -1;
      if (r.dialect() == "llmft" && on("offload")) k.param_offload = true;
      break;
    case Framework::Axolotl: {
      const std::string a = lower_text(r, "activation_offloading");
      if (!a.empty() && a != "false") k.offload_layers = -1;
      if (on("offload")) k.param_offload = true;
      break;
    }
    case Framework::Torchtitan:
      if (on("offload")) k.param_offload = true;
      break;
    case Framework::AutoModel: {
      const std::string p = lower_text(r, "offload");
      if (!p.empty() && p != "null" && p != "none" && p != "false") k.param_offload = true;
      break;
    }
  }
}

int zero_stage_of(const std::string& sharding) {
  const std::string s = to_lower(sharding);
  if (s.empty()) return -1;
  if (s == "no_shard" || s == "ddp") return 0;
  if (s == "optim") return 1;
  if (contains(s, "zero2") || s == "optim_grads" || s == "shard_grad_op") return 2;
  if (contains(s, "zero3") || contains(s, "full") || contains(s, "optim_grads_params") || contains(s, "hybrid") ||
      contains(s, "fsdp"))
    return 3;
  return -1;
}

void read_sharding(const Recipe& r, const recipe::Plan& plan, Knobs& k) {
  if (plan.dp_shard > 0) k.zero_stage = 3;  // FSDP, even over one rank (it shards as DP grows)
  if (const int z = zero_stage_of(text(r, "sharding")); z >= 0 && (z != 0 || plan.dp_shard <= 0)) k.zero_stage = z;
  const std::string reshard = lower_text(r, "fsdp_reshard_after_forward");
  if (reshard == "never" || reshard == "false") k.reshard_after_forward = false;
}

// ---- choices

struct Word {
  const char* word;
  std::uint8_t value;
};

std::optional<std::uint8_t> by_word(const std::string& value, std::initializer_list<Word> words) {
  const std::string v = to_lower(value);
  for (const Word& w : words) {
    if (v == w.word) return w.value;
  }
  return std::nullopt;
}

constexpr std::initializer_list<Word> kMegatronAttention = {
    {"auto", attention::kFused}, {"fused", attention::kFused}, {"flash", attention::kFlash},
    {"unfused", attention::kUnfused}, {"local", attention::kUnfused}};
constexpr std::initializer_list<Word> kHfAttention = {
    {"sdpa", attention::kSdpa},           {"flash_attention_2", attention::kFlash},
    {"flash_attention_3", attention::kFlash3}, {"flex_attention", attention::kFlex},
    {"eager", attention::kUnfused},        {"xformers", attention::kFlash},
    {"kernels-community/vllm-flash-attn3", attention::kFlash3}};
constexpr std::initializer_list<Word> kAutomodelAttention = {
    {"te", attention::kFused},     {"cudnn", attention::kFused}, {"sdpa", attention::kSdpa},
    {"flex", attention::kFlex},    {"eager", attention::kUnfused}};

std::uint8_t read_attention(const Recipe& r) {
  switch (r.framework()) {
    case Framework::Megatron:
    case Framework::Bridge:
      return by_word(text(r, "attention_backend"), kMegatronAttention).value_or(attention::kFused);
    case Framework::AutoModel:
      if (auto v = by_word(text(r, "hf_attn_implementation"), kHfAttention)) return *v;
      return by_word(text(r, "attention_backend"), kAutomodelAttention).value_or(attention::kFused);
    case Framework::Axolotl:
      if (auto v = by_word(text(r, "attention_backend"), kHfAttention)) return *v;
      if (flag(r, "flash_attention").value_or(false)) return attention::kFlash;
      if (flag(r, "flex_attention").value_or(false)) return attention::kFlex;
      if (flag(r, "xformers_attention").value_or(false)) return attention::kFlash;
      return attention::kSdpa;  // transformers' default
    case Framework::HyperPod:
      if (r.dialect() == "llmft") return by_word(text(r, "attention_backend"), kHfAttention).value_or(attention::kSdpa);
      return by_word(text(r, "attention_backend"), {{"fused", attention::kFused}, {"flash", attention::kFlash}})
          .value_or(attention::kFused);
    case Framework::Torchtitan: return attention::kSdpa;
  }
  return attention::kFused;
}

std::uint8_t read_compile(const Recipe& r) {
  switch (r.framework()) {
    case Framework::Torchtitan: return flag(r, "compile").value_or(false);
    case Framework::Axolotl: {
      const std::string c = lower_text(r, "compile");
      return !c.empty() && c != "false";
    }
    case Framework::HyperPod: return r.dialect() != "llmft";  // HF Trainer runs eager
    default: return 1;  // Transformer Engine's fused kernels
  }
}

std::uint8_t read_cuda_graphs(const Recipe& r) {
  const std::string g = lower_text(r, "cuda_graphs");
  if (g.empty() || g == "none" || g == "false") return cuda_graphs::kNone;
  return g == "full_iteration" ? cuda_graphs::kFull : cuda_graphs::kLayers;
}

std::uint8_t read_dispatcher(const Recipe& r) {
  const std::string d = lower_text(r, "moe_dispatcher");
  switch (r.framework()) {
    case Framework::Megatron:
    case Framework::Bridge: {
      if (flag(r, "moe_enable_deepep").value_or(false)) return dispatcher::kDeepEp;
      const std::string v = d.empty() ? to_lower(r.value_or_default("moe_dispatcher").value_or(recipe::Value{}).str()) : d;
      if (v == "flex") return dispatcher::kDeepEp;  // flex runs DeepEP or HybridEP
      if (v == "alltoall") return dispatcher::kAllToAll;
      if (v == "allgather") return dispatcher::kAllGather;
      return r.framework() == Framework::Megatron ? dispatcher::kAllGather : dispatcher::kAllToAll;
    }
    case Framework::AutoModel:
      return contains(d, "deepep") || contains(d, "hybridep") ? dispatcher::kDeepEp : dispatcher::kAllToAll;
    case Framework::Torchtitan:
      return lower_text(r, "ep_comm_backend") == "deepep" ? dispatcher::kDeepEp : dispatcher::kAllToAll;
    case Framework::Axolotl:
      return contains(lower_text(r, "expert_parallel_backend"), "deep") ? dispatcher::kDeepEp : dispatcher::kAllToAll;
    case Framework::HyperPod: return dispatcher::kAllToAll;
  }
  return dispatcher::kAllToAll;
}

std::uint8_t read_cp_comm(const Recipe& r) {
  if (r.framework() == Framework::Torchtitan)
    return lower_text(r, "cp_rotate_method") == "alltoall" ? cp_comm::kP2p : cp_comm::kAllGather;
  const std::string c = lower_text(r, "cp_comm_type");
  if (c == "all_gather") return cp_comm::kAllGather;
  if (c == "a2a" || c == "a2a+p2p") return cp_comm::kA2a;
  return cp_comm::kP2p;
}

// The framework's default bucket, in the lever's own unit: Megatron's
// max(40M, 1M x DP) elements, PyTorch DDP's 25 MB.
double default_bucket(const Recipe& r, const recipe::Plan& plan) {
  const Framework f = r.framework();
  if (f == Framework::Megatron || f == Framework::Bridge)
    return std::max(40e6, 1e6 * std::max(1, plan.dp) * std::max(1, plan.cp));
  return 25;
}

std::uint8_t read_bucket(const Recipe& r, const recipe::Plan& plan) {
  auto e = r.find_named("ddp_bucket_size");
  if (!e || !e->value.as_double()) return bucket::kDefault;
  const double ratio = *e->value.as_double() / default_bucket(r, plan);
  return ratio < 0.5 ? bucket::kSmall : ratio > 2 ? bucket::kLarge : bucket::kDefault;
}

std::uint8_t read_workers(const Recipe& r) {
  if (auto v = r.value_or_default("num_workers"); v && v->as_int()) return workers_value(*v->as_int());
  const Framework f = r.framework();
  return f == Framework::Axolotl || f == Framework::HyperPod || f == Framework::AutoModel ? workers::k0 : workers::k2;
}

void read_env_choices(const Recipe& r, Knobs& k) {
  if (auto v = env_value(r, "NCCL_NVLS_ENABLE")) k.set(Choice::Nvls, trim(*v) == "0" ? 1 : 0);
  if (auto v = env_value(r, "NCCL_ALGO"))
    k.set(Choice::NcclAlgo, by_word(std::string(trim(*v)), {{"ring", nccl_algo::kRing}, {"tree", nccl_algo::kTree}})
                                .value_or(nccl_algo::kAuto));
  if (auto v = env_value(r, "NCCL_PROTO"))
    k.set(Choice::NcclProto, by_word(std::string(trim(*v)), {{"simple", nccl_proto::kSimple}, {"ll", nccl_proto::kLL},
                                                               {"ll128", nccl_proto::kLL128}})
                                 .value_or(nccl_proto::kAuto));
  if (auto v = env_value(r, "NCCL_MIN_NCHANNELS")) {
    const long long n = recipe::Value::parse(trim(*v)).as_int().value_or(0);
    k.set(Choice::NcclChannels, n <= 0 ? nccl_channels::kAuto : n <= 4 ? nccl_channels::k4
                                                              : n <= 16 ? nccl_channels::k16 : nccl_channels::k32);
  }
  if (auto v = env_value(r, "CUDA_DEVICE_MAX_CONNECTIONS")) {
    const long long n = recipe::Value::parse(trim(*v)).as_int().value_or(8);
    k.set(Choice::MaxConnections, n == 1 ? max_connections::k1 : n > 8 ? max_connections::k32 : max_connections::kUnset);
  }
  for (const char* name : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"}) {
    if (auto v = env_value(r, name)) k.set(Choice::Expandable, contains(to_lower(*v), "expandable_segments:true"));
  }
}

// ---------------------------------------------------------------- writing

std::string bool_text(bool b) { return b ? "true" : "false"; }

bool enum_has(const LeverDef* def, std::string_view v) {
  return def && std::find(def->values.begin(), def->values.end(), v) != def->values.end();
}

// A bool or on/off enum lever's value for `on`.
std::optional<std::string> switch_value(const Recipe& r, const char* lever, bool on) {
  const LeverDef* def = lever_def(r, lever);
  if (!def || !has_lever(r, lever)) return std::nullopt;
  if (def->type == LeverType::Bool) return bool_text(on);
  if (def->type == LeverType::Enum && enum_has(def, bool_text(on))) return bool_text(on);
  return std::nullopt;
}

// The first listed word of `words` for `value` that the lever accepts.
std::optional<std::string> enum_word(const Recipe& r, const char* lever, std::uint8_t value, std::initializer_list<Word> words) {
  const LeverDef* def = lever_def(r, lever);
  if (!def || !has_lever(r, lever)) return std::nullopt;
  for (const Word& w : words) {
    if (w.value == value && (def->type != LeverType::Enum || enum_has(def, w.word))) return std::string(w.word);
  }
  return std::nullopt;
}

using Settings = std::optional<std::vector<LeverSetting>>;

Settings one(const std::string& lever, const std::optional<std::string>& value) {
  if (!value) return std::nullopt;
  return std::vector<LeverSetting>{{lever, *value}};
}

Settings env_setting(const Recipe& r, const char* name, const std::optional<std::string>& value) {
  if (!env_in_file(r) || !value) return std::nullopt;
  return std::vector<LeverSetting>{{std::string("env.") + name, *value}};
}

Settings write_attention(const Recipe& r, std::uint8_t v) {
  switch (r.framework()) {
    case Framework::Megatron:
    case Framework::Bridge:
      return one("attention_backend", enum_word(r, "attention_backend", v,
                                                {{"fused", attention::kFused}, {"flash", attention::kFlash}, {"unfused", attention::kUnfused}}));
    case Framework::AutoModel:
      if (r.find_named("hf_attn_implementation"))
        return one("hf_attn_implementation", enum_word(r, "hf_attn_implementation", v, kHfAttention));
      return one("attention_backend", enum_word(r, "attention_backend", v, kAutomodelAttention));
    case Framework::Axolotl:
      if (r.find_named("flash_attention") || r.find_named("sdp_attention") || r.find_named("flex_attention") ||
          r.find_named("xformers_attention"))
        return std::nullopt;  // the legacy switches: several keys to keep consistent
      return one("attention_backend", enum_word(r, "attention_backend", v, kHfAttention));
    case Framework::HyperPod:
      if (r.dialect() == "llmft") return one("attention_backend", enum_word(r, "attention_backend", v, kHfAttention));
      return one("attention_backend",
                 enum_word(r, "attention_backend", v, {{"fused", attention::kFused}, {"flash", attention::kFlash}}));
    case Framework::Torchtitan: return std::nullopt;
  }
  return std::nullopt;
}

Settings write_compile(const Recipe& r, std::uint8_t v) {
  if (r.framework() != Framework::Torchtitan && r.framework() != Framework::Axolotl) return std::nullopt;
  return one("compile", switch_value(r, "compile", v == 1));
}

Settings write_cuda_graphs(const Recipe& r, std::uint8_t v) {
  return one("cuda_graphs", enum_word(r, "cuda_graphs", v,
                                      {{"none", cuda_graphs::kNone}, {"transformer_engine", cuda_graphs::kLayers},
                                       {"local", cuda_graphs::kLayers}, {"full_iteration", cuda_graphs::kFull}}));
}

Settings write_dispatcher(const Recipe& r, std::uint8_t v) {
  switch (r.framework()) {
    case Framework::Megatron:
    case Framework::Bridge: {
      if (r.find_named("moe_enable_deepep")) return std::nullopt;
      if (v == dispatcher::kDeepEp) {
        if (!has_lever(r, "moe_flex_dispatcher_backend")) return std::nullopt;
        return std::vector<LeverSetting>{{"moe_dispatcher", "flex"}, {"moe_flex_dispatcher_backend", "deepep"}};
      }
      return one("moe_dispatcher", enum_word(r, "moe_dispatcher", v,
                                             {{"alltoall", dispatcher::kAllToAll}, {"allgather", dispatcher::kAllGather}}));
    }
    case Framework::AutoModel:
      return one("moe_dispatcher",
                 enum_word(r, "moe_dispatcher", v, {{"torch", dispatcher::kAllToAll}, {"deepep", dispatcher::kDeepEp}}));
    case Framework::Torchtitan:
      return one("ep_comm_backend",
                 enum_word(r, "ep_comm_backend", v, {{"standard", dispatcher::kAllToAll}, {"deepep", dispatcher::kDeepEp}}));
    default: return std::nullopt;
  }
}

Settings write_cp_comm(const Recipe& r, std::uint8_t v) {
  if (r.framework() == Framework::Torchtitan)
    return one("cp_rotate_method", enum_word(r, "cp_rotate_method", v,
                                             {{"allgather", cp_comm::kAllGather}, {"alltoall", cp_comm::kP2p}}));
  return one("cp_comm_type", enum_word(r, "cp_comm_type", v,
                                       {{"p2p", cp_comm::kP2p}, {"all_gather", cp_comm::kAllGather}, {"a2a", cp_comm::kA2a}}));
}

Settings write_bucket(const Recipe& r, const Workload& w, std::uint8_t v) {
  if (!has_lever(r, "ddp_bucket_size")) return std::nullopt;
  const double base = default_bucket(r, w.plan);
  const double size = v == bucket::kSmall ? base / 4 : v == bucket::kLarge ? base * 4 : base;
  return one("ddp_bucket_size", fmt::format("{}", static_cast<long long>(std::llround(size))));
}

Settings write_workers(const Recipe& r, std::uint8_t v) {
  if (!has_lever(r, "num_workers")) return std::nullopt;
  return one("num_workers", std::to_string(worker_count(v)));
}

Settings write_expandable(const Recipe& r, std::uint8_t v) {
  const std::string name = env_value(r, "PYTORCH_ALLOC_CONF") && !env_value(r, "PYTORCH_CUDA_ALLOC_CONF")
                               ? "PYTORCH_ALLOC_CONF"
                               : "PYTORCH_CUDA_ALLOC_CONF";
  std::string conf = env_value(r, name).value_or("");
  std::vector<std::string> parts;
  for (auto& p : split(conf, ',')) {
    if (!trim(p).empty() && !contains(to_lower(p), "expandable_segments")) parts.emplace_back(trim(p));
  }
  parts.push_back(v ? "expandable_segments:True" : "expandable_segments:False");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return env_setting(r, name.c_str(), out);
}

Settings write_tp_overlap(const Recipe& r, bool on) {
  for (const char* lever : {"tp_comm_overlap", "enable_async_tensor_parallel"}) {
    if (has_lever(r, lever)) return one(lever, switch_value(r, lever, on));
  }
  return std::nullopt;
}

Settings write_choice(const Recipe& r, const Workload& w, Choice c, std::uint8_t v) {
  switch (c) {
    case Choice::Attention: return write_attention(r, v);
    case Choice::Compile: return write_compile(r, v);
    case Choice::CudaGraphs: return write_cuda_graphs(r, v);
    case Choice::Nvls: return env_setting(r, "NCCL_NVLS_ENABLE", std::string(v == 1 ? "0" : "1"));
    case Choice::NcclAlgo: return std::nullopt;  // the gate refuses it: reduction order
    case Choice::NcclProto: {
      static constexpr const char* kWords[] = {"LL,LL128,Simple", "Simple", "LL", "LL128"};
      return env_setting(r, "NCCL_PROTO", std::string(kWords[v]));
    }
    case Choice::NcclChannels: {
      if (v == nccl_channels::kAuto) return std::nullopt;
      static constexpr const char* kWords[] = {"", "4", "16", "32"};
      return env_setting(r, "NCCL_MIN_NCHANNELS", std::string(kWords[v]));
    }
    case Choice::Bucket: return write_bucket(r, w, v);
    case Choice::MaxConnections: {
      static constexpr const char* kWords[] = {"8", "1", "32"};
      return env_setting(r, "CUDA_DEVICE_MAX_CONNECTIONS", std::string(kWords[v]));
    }
    case Choice::Workers: return write_workers(r, v);
    case Choice::Dispatcher: return write_dispatcher(r, v);
    case Choice::CpComm: return write_cp_comm(r, v);
    case Choice::Expandable: return write_expandable(r, v);
    case Choice::OverlapGradReduce: return one("overlap_grad_reduce", switch_value(r, "overlap_grad_reduce", v == 1));
    case Choice::OverlapParamGather: return one("overlap_param_gather", switch_value(r, "overlap_param_gather", v == 1));
    case Choice::TpCommOverlap: return write_tp_overlap(r, v == 1);
  }
  return std::nullopt;
}

// ---- structural levers

// Megatron's --recompute-modules takes its modules as separate words (nargs).
std::string modules_text(unsigned modules) { return recompute_module::text_of(modules, " "); }

// The granularity as the recipe's recompute lever spells it.
std::optional<std::string> granularity_word(const Recipe& r, const std::string& g) {
  const LeverDef* def = lever_def(r, "recompute");
  if (!def || !has_lever(r, "recompute")) return std::nullopt;
  if (def->type == LeverType::Bool) {
    if (g == "selective") return std::nullopt;
    return bool_text(g == "full");
  }
  if (g == "none") return enum_has(def, "none") ? "none" : enum_has(def, "false") ? "false" : "none";
  if (enum_has(def, g)) return g;
  if (g == "full" && enum_has(def, "true")) return std::string("true");
  return std::nullopt;
}

Settings write_recompute(const Recipe& r, const RecomputeSetting& from, const RecomputeSetting& to) {
  auto g = granularity_word(r, to.granularity);
  if (!g) return std::nullopt;
  std::vector<LeverSetting> out;
  if (to.granularity != from.granularity) out.push_back({"recompute", *g});
  if (to.granularity == "full" && to.layers != from.layers) {
    if (!has_lever(r, "recompute_layers") || !has_lever(r, "recompute_method")) return std::nullopt;
    if (to.layers > 0) {
      out.push_back({"recompute_method", "block"});
      out.push_back({"recompute_layers", std::to_string(to.layers)});
    } else {
      out.push_back({"recompute_method", "uniform"});
      out.push_back({"recompute_layers", "1"});
    }
  }
  if (to.granularity == "selective") {
    if (r.framework() == Framework::Torchtitan) {
      if (has_lever(r, "selective_ac_option")) out.push_back({"selective_ac_option", "op"});
    } else if (to.modules != from.modules || (from.granularity != "selective" && to.modules != recompute_module::kCoreAttn)) {
      // Only Megatron-LM takes the list as words; a YAML list (Bridge) is not written as text.
      if (r.framework() != Framework::Megatron || !has_lever(r, "recompute_modules")) return std::nullopt;
      out.push_back({"recompute_modules", modules_text(to.modules)});
    }
  }
  return out;
}

Settings write_offload(const Recipe& r, int layers) {
  switch (r.framework()) {
    case Framework::Megatron:  // layers per stage; Megatron offloads fewer than all
      if (layers < 0 || !has_lever(r, "offload")) return std::nullopt;
      return one("offload", std::to_string(layers));
    case Framework::Bridge: return one("offload", switch_value(r, "offload", layers != 0));
    case Framework::HyperPod:
      return r.dialect() == "smp" ? one("offload", switch_value(r, "offload", layers != 0)) : std::nullopt;
    case Framework::Axolotl: return one("activation_offloading", switch_value(r, "activation_offloading", layers != 0));
    default: return std::nullopt;
  }
}

Settings write_zero_stage(const Recipe& r, int stage) {
  const Framework f = r.framework();
  if (f == Framework::Torchtitan) return std::nullopt;  // dp_shard / dp_replicate: layout
  static const std::initializer_list<Word> megatron = {{"no_shard", 0}, {"optim", 1}, {"optim_grads", 2}, {"optim_grads_params", 3}};
  static const std::initializer_list<Word> fsdp = {{"no_shard", 0}, {"shard_grad_op", 2}, {"full_shard", 3},
                                                   {"NO_SHARD", 0}, {"SHARD_GRAD_OP", 2}, {"FULL_SHARD", 3}};
  static const std::initializer_list<Word> automodel = {{"ddp", 0}, {"fsdp2", 3}};
  const auto u = static_cast<std::uint8_t>(stage);
  if (f == Framework::Megatron || f == Framework::Bridge) {
    if (!flag(r, "use_megatron_fsdp").value_or(false)) return std::nullopt;
    return one("sharding", enum_word(r, "sharding", u, megatron));
  }
  if (f == Framework::AutoModel) return one("sharding", enum_word(r, "sharding", u, automodel));
  return one("sharding", enum_word(r, "sharding", u, fsdp));
}

Settings write_reshard(const Recipe& r, bool on) {
  const LeverDef* def = lever_def(r, "fsdp_reshard_after_forward");
  if (!def || !has_lever(r, "fsdp_reshard_after_forward")) return std::nullopt;
  if (def->type == LeverType::Enum) return one("fsdp_reshard_after_forward", std::string(on ? "always" : "never"));
  return one("fsdp_reshard_after_forward", bool_text(on));
}

std::optional<std::string> fp8_word(const Recipe& r, bool on) {
  const LeverDef* def = lever_def(r, "fp8");
  if (!def || !has_lever(r, "fp8")) return std::nullopt;
  if (def->type == LeverType::Bool) return bool_text(on);
  if (def->type != LeverType::Enum || !on) return std::nullopt;
  for (const char* v : {"hybrid", "e4m3"}) {
    if (enum_has(def, v)) return std::string(v);
  }
  return std::nullopt;
}


// ---------------------------------------------------------------- the dimensions

struct Dimension {
  std::string name;
  std::function<std::string(const Workload&)> value;  // in the simulator's words
  std::function<Settings(const Recipe&, const Workload& from, const Workload& to)> write;
};

Settings number_lever(const Recipe& r, const char* lever, long long v) {
  if (!has_lever(r, lever)) return std::nullopt;
  return one(lever, std::to_string(v));
}

std::vector<Dimension> make_dimensions() {
  using W = const Workload&;
  using R = const Recipe&;
  std::vector<Dimension> d;
  auto layout = [&](const char* name, int recipe::Plan::*field) {
    d.push_back({name, [field](W w) { return std::to_string(w.plan.*field); },
                 [name, field](R r, W, W to) { return number_lever(r, name, to.plan.*field); }});
  };
  layout("tp", &recipe::Plan::tp);
  layout("pp", &recipe::Plan::pp);
  layout("vp", &recipe::Plan::vp);
  layout("cp", &recipe::Plan::cp);
  layout("ep", &recipe::Plan::ep);
  layout("etp", &recipe::Plan::etp);
  layout("mbs", &recipe::Plan::mbs);
  d.push_back({"recompute", [](W w) { return describe(recompute_of(w.knobs)); },
               [](R r, W from, W to) { return write_recompute(r, recompute_of(from.knobs), recompute_of(to.knobs)); }});
  d.push_back({"offload", [](W w) { return w.knobs.offload_layers < 0 ? std::string("all layers") : std::to_string(w.knobs.offload_layers); },
               [](R r, W, W to) { return write_offload(r, to.knobs.offload_layers); }});
  auto toggle = [&](const char* name, bool Knobs::*field, std::function<Settings(R, bool)> write) {
    d.push_back({name, [field](W w) { return bool_text(w.knobs.*field); },
                 [field, write](R r, W, W to) { return write(r, to.knobs.*field); }});
  };
  toggle("sequence_parallel", &Knobs::sequence_parallel,
         [](R r, bool on) { return one("sequence_parallel", switch_value(r, "sequence_parallel", on)); });
  toggle("distributed_optimizer", &Knobs::distributed_optimizer,
         [](R r, bool on) { return one("distributed_optimizer", switch_value(r, "distributed_optimizer", on)); });
  d.push_back({"sharding", [](W w) { return fmt::format("zero-{}", w.knobs.zero_stage); },
               [](R r, W, W to) { return write_zero_stage(r, to.knobs.zero_stage); }});
  toggle("fsdp_reshard_after_forward", &Knobs::reshard_after_forward, write_reshard);
  toggle("fp8", &Knobs::fp8, [](R r, bool on) { return one("fp8", fp8_word(r, on)); });
  for (std::size_t i = 0; i < kChoiceCount; ++i) {
    const auto c = static_cast<Choice>(i);
    d.push_back({std::string(choice_name(c)), [c](W w) { return std::string(choice_values(c)[w.knobs.get(c)]); },
                 [c](R r, W, W to) { return write_choice(r, to, c, to.knobs.get(c)); }});
  }
  return d;
}

const std::vector<Dimension>& dimensions() {
  static const std::vector<Dimension> d = make_dimensions();
  return d;
}

}  // namespace

RecomputeSetting recompute_of(const Knobs& k) {
  RecomputeSetting s;
  s.granularity = k.recompute_granularity.empty() ? "none" : k.recompute_granularity;
  s.layers = s.granularity == "full" ? k.recompute_num_layers : 0;
  s.modules = s.granularity == "selective" ? k.recompute_modules : recompute_module::kCoreAttn;
  return s;
}

void apply(const RecomputeSetting& s, Workload& w) {
  w.knobs.recompute_granularity = s.granularity;
  w.knobs.recompute_num_layers = s.granularity == "full" ? s.layers : 0;
  w.knobs.recompute_modules = s.modules;
  w.plan.recompute = s.granularity;
}

std::string describe(const RecomputeSetting& s) {
  if (s.granularity == "full" && s.layers > 0) return fmt::format("full ({} layers)", s.layers);
  if (s.granularity == "full" && s.layers < 0) return fmt::format("full (every {}th layer)", -s.layers);
  if (s.granularity == "selective" && s.modules != recompute_module::kCoreAttn) {
    return "selective (" + recompute_module::text_of(s.modules, ", ") + ")";
  }
  return s.granularity;
}

Knobs read_knobs(const Recipe& r, const recipe::Plan& plan) {
  Knobs k;
  k.sequence_parallel = flag(r, "sequence_parallel").value_or(plan.tp > 1);
  if (auto v = r.value_or_default("distributed_optimizer")) {
    const std::string t = to_lower(v->str());
    k.distributed_optimizer = contains(t, "distributed") || v->as_bool().value_or(false);
  }
  k.set(Choice::OverlapGradReduce, flag(r, "overlap_grad_reduce").value_or(k.overlap_grad_reduce()));
  k.set(Choice::OverlapParamGather, flag(r, "overlap_param_gather").value_or(k.overlap_param_gather()));
  k.set(Choice::TpCommOverlap,
        flag(r, "tp_comm_overlap").value_or(false) || flag(r, "enable_async_tensor_parallel").value_or(false));
  k.fp8_param_gather = flag(r, "fp8_param_gather").value_or(false);
  const std::string precision = plan.precision;
  k.fp8 = contains(precision, "fp8") || flag(r, "fp8").value_or(false) || contains(text(r, "fp8"), "hybrid") ||
          contains(text(r, "fp8"), "e4m3");
  k.mxfp8 = k.fp8 && (contains(to_lower(precision), "mx") || contains(lower_text(r, "fp8_recipe"), "mx"));
  read_recompute(r, plan, k);
  if (k.recompute_num_layers < 0) {
    // torchtitan's layer-wise selective checkpointing: every N-th layer of the stage.
    const int stage = (std::max(1, r.model() ? r.model()->layers : 1) + std::max(1, plan.pp) - 1) / std::max(1, plan.pp);
    k.recompute_num_layers = std::max(1, stage / -k.recompute_num_layers);
  }
  read_offload(r, k);
  k.uneven_pipeline_split = uneven_split(r);
  k.loss_fp32 = flag(r, "loss_fp32_upcast").value_or(true);
  read_sharding(r, plan, k);
  if (auto e = r.find_named("optimizer_cpu_offload"); e && e->value.as_bool().value_or(false)) k.optimizer_cpu_offload = 1.0;
  k.bf16_moments = flag(r, "use_precision_aware_optimizer").value_or(false) &&
                   contains(lower_text(r, "exp_avg_dtype"), "16") && contains(lower_text(r, "exp_avg_sq_dtype"), "16");
  k.sft_data = r.framework() == Framework::Axolotl || (r.framework() == Framework::HyperPod && r.dialect() == "llmft");

  k.set(Choice::Attention, read_attention(r));
  k.set(Choice::Compile, read_compile(r));
  k.set(Choice::CudaGraphs, read_cuda_graphs(r));
  k.set(Choice::Bucket, read_bucket(r, plan));
  k.set(Choice::Workers, read_workers(r));
  k.set(Choice::Dispatcher, read_dispatcher(r));
  k.set(Choice::CpComm, read_cp_comm(r));
  read_env_choices(r, k);
  return k;
}

SpellableLevers spellable(const Recipe& r, const Workload& base) {
  SpellableLevers s;
  const Knobs& k = base.knobs;
  const RecomputeSetting own = recompute_of(k);
  s.recompute.push_back(own);
  const int stage = (base.model.layers + std::max(1, base.plan.pp) - 1) / std::max(1, base.plan.pp);
  std::vector<RecomputeSetting> candidates = {{"none", 0, recompute_module::kCoreAttn},
                                              {"selective", 0, recompute_module::kCoreAttn},
                                              {"full", 0, recompute_module::kCoreAttn}};
  for (int n : {stage / 4, stage / 2, 3 * stage / 4}) {
    if (n > 0 && n < stage) candidates.push_back({"full", n, recompute_module::kCoreAttn});
  }
  using namespace recompute_module;
  candidates.push_back({"selective", 0, kCoreAttn | kMlp});
  if (base.model.is_moe()) candidates.push_back({"selective", 0, kCoreAttn | kMoeAct});
  if (base.model.is_mla()) candidates.push_back({"selective", 0, kCoreAttn | kMlaUpProj});
  if (r.framework() == Framework::Torchtitan) {
    std::erase_if(candidates, [](const RecomputeSetting& c) { return c.granularity == "selective" && c.modules != kCoreAttn; });
  }
  for (const RecomputeSetting& c : candidates) {
    if (c == own) continue;
    if (write_recompute(r, own, c)) s.recompute.push_back(c);
  }
  s.offload_layers.push_back(k.offload_layers);
  for (int n : {0, -1}) {
    if (n != k.offload_layers && write_offload(r, n)) s.offload_layers.push_back(n);
  }
  if (r.framework() == Framework::Megatron && write_offload(r, stage / 2) && stage / 2 > 0 && k.offload_layers != stage / 2)
    s.offload_layers.push_back(stage / 2);
  s.zero_stage.push_back(k.zero_stage);
  for (int z : {0, 1, 2, 3}) {
    if (z != k.zero_stage && (k.zero_stage >= 2) == (z >= 2) && write_zero_stage(r, z)) s.zero_stage.push_back(z);
  }
  s.sequence_parallel = switch_value(r, "sequence_parallel", !k.sequence_parallel).has_value();
  s.distributed_optimizer = k.zero_stage == 0 && switch_value(r, "distributed_optimizer", !k.distributed_optimizer).has_value();
  s.reshard_after_forward = write_reshard(r, !k.reshard_after_forward).has_value();
  s.fp8 = !k.fp8 && fp8_word(r, true).has_value();
  s.etp = has_lever(r, "etp");
  for (std::size_t i = 0; i < kChoiceCount; ++i) {
    const auto c = static_cast<Choice>(i);
    s.choices[i] = 1u << k.get(c);
    for (std::uint8_t v = 0; v < choice_values(c).size(); ++v) {
      if (v != k.get(c) && write_choice(r, base, c, v)) s.choices[i] |= 1u << v;
    }
  }
  return s;
}

std::vector<DimensionEdit> edits_between(const Recipe& r, const Workload& from, const Workload& to) {
  std::vector<DimensionEdit> out;
  for (const Dimension& d : dimensions()) {
    const std::string a = d.value(from), b = d.value(to);
    if (a == b) continue;
    if (d.name == "etp" && !to.model.is_moe()) continue;  // no experts: nothing to shard
    Settings s = d.write(r, from, to);
    if (!s) throw InputError({r.config_path(), 0, 0}, d.name, "the recipe cannot spell " + d.name + " = " + b);
    out.push_back({d.name, a, b, std::move(*s)});
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> dimension_values(const Workload& w) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(dimensions().size());
  for (const Dimension& d : dimensions()) out.emplace_back(d.name, d.value(w));
  return out;
}

int changed_dimensions(const Workload& a, const Workload& b) {
  const auto& p = a.plan;
  const auto& q = b.plan;
  const auto& k = a.knobs;
  const auto& l = b.knobs;
  int n = (p.tp != q.tp) + (p.pp != q.pp) + (p.vp != q.vp) + (p.cp != q.cp) + (p.ep != q.ep) + (a.model.is_moe() && p.etp != q.etp) +
          (p.mbs != q.mbs) + !(recompute_of(k) == recompute_of(l)) + (k.offload_layers != l.offload_layers) +
          (k.sequence_parallel != l.sequence_parallel) + (k.distributed_optimizer != l.distributed_optimizer) +
          (k.zero_stage != l.zero_stage) + (k.reshard_after_forward != l.reshard_after_forward) +
          (k.fp8 != l.fp8);
  for (std::size_t i = 0; i < kChoiceCount; ++i) n += k.choices[i] != l.choices[i];
  return n;
}

}  // namespace attune::sim
