#include "attune/recipe/recipe.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "attune/recipe/command_document.h"
#include "attune/recipe/wrapper_file.h"
#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::recipe {

Recipe::Recipe(Recipe&&) noexcept = default;
Recipe& Recipe::operator=(Recipe&&) noexcept = default;
Recipe::~Recipe() = default;

Recipe::Recipe(const Recipe& o)
    : doc_(o.doc_->clone()),
      framework_(o.framework_),
      dialect_(o.dialect_),
      adapter_(o.adapter_),
      options_(o.options_),
      config_path_(o.config_path_),
      wrapper_path_(o.wrapper_path_),
      file_hardware_(o.file_hardware_),
      model_(o.model_),
      hardware_(o.hardware_),
      hardware_source_(o.hardware_source_),
      launch_(o.launch_),
      measure_(o.measure_),
      notes_(o.notes_) {}

namespace {

RecipeOptions merge_wrapper(const RecipeOptions& flags, const WrapperFile& w) {
  RecipeOptions o = flags;
  if (o.framework.empty()) o.framework = w.framework;
  if (o.framework_version.empty()) o.framework_version = w.framework_version;
  if (o.model.empty()) o.model = w.model;
  if (o.hardware.gpu.empty()) o.hardware.gpu = w.hardware.gpu;
  if (o.hardware.nodes == 0) o.hardware.nodes = w.hardware.nodes;
  if (o.hardware.gpus_per_node == 0) o.hardware.gpus_per_node = w.hardware.gpus_per_node;
  return o;
}

// A layout number written as a mapping or a list (`tp_size: {a: 1}`) has no
// leaf of its own, so the reader would see it absent and take the default.
void refuse_layout_containers(const Recipe& r) {
  if (r.document().format() == Format::Script) return;  // a flag's several words are a List, read as such
  std::vector<std::pair<std::string, std::string>> keys;
  for (const char* name : {"nodes", "gpus_per_node", "tp", "pp", "vp", "cp", "ep", "etp", "dp_shard", "dp_replicate", "dp",
                           "mbs", "gbs", "grad_accum", "seq_len"}) {
    if (std::string key = r.key_of(name); !key.empty()) keys.emplace_back(name, key);
  }
  for (const auto& e : r.document().entries()) {
    for (const auto& [name, key] : keys) {
      if (e.path.size() > key.size() && e.path.compare(0, key.size(), key) == 0 &&
          (e.path[key.size()] == '.' || e.path[key.size()] == '[')) {
        throw InputError({r.config_path(), e.line, 0}, key,
                         name + " must be a positive whole number, got a " +
                             (e.path[key.size()] == '[' ? "list" : "mapping"));
      }
    }
  }
}

std::string stem_of(const std::string& path) { return std::filesystem::path(path).stem().string(); }

}  // namespace

Recipe Recipe::load(const std::string& path, const RecipeOptions& options) {
  std::string text = read_file(path);
  if (CommandDocument::holds_command_recipe(text)) return load_command_recipe(path, std::move(text), options);
  if (is_wrapper_file(text)) {
    WrapperFile w = parse_wrapper_file(path, text);
    Recipe r = from_text(w.config, read_file(w.config), merge_wrapper(options, w));
    r.wrapper_path_ = path;
    r.launch_ = std::move(w.launch);
    r.measure_ = w.measure;
    if (options.hardware.nodes == 0) r.hardware_source_ = "wrapper";
    return r;
  }
  return from_text(path, std::move(text), options);
}

// torchtitan's Python-config generation: the wrapper's command line is the
// recipe (the document), and the wrapper both the config and the wrapper.
Recipe Recipe::load_command_recipe(const std::string& path, std::string text, const RecipeOptions& options) {
  WrapperFile w = parse_wrapper_file(path, text);
  RecipeOptions o = merge_wrapper(options, w);
  if (!o.framework.empty() && parse_framework(o.framework) != Framework::Torchtitan)
    throw InputError({path, 0, 0}, "framework",
                     "a recipe kept as a command line with --module/--config is torchtitan's (Python configs), not " +
                         o.framework + "'s");
  Recipe r = from_document(CommandDocument::parse(path, std::move(text)), o);
  r.wrapper_path_ = path;
  r.launch_ = std::move(w.launch);
  r.launch_.command.clear();  // the document's: edited as the recipe
  r.measure_ = w.measure;
  if (options.hardware.nodes == 0) r.hardware_source_ = "wrapper";
  return r;
}

Recipe Recipe::from_text(const std::string& name, std::string text, const RecipeOptions& options) {
  return from_document(parse_document(name, std::move(text)), options);
}

Recipe Recipe::from_document(std::unique_ptr<Document> doc, const RecipeOptions& options) {
  Recipe r;
  const std::string name = doc->name();
  r.config_path_ = name;
  r.options_ = options;
  r.doc_ = std::move(doc);
  Detection d = detect_framework(*r.doc_);
  if (!options.framework.empty()) {
    auto fw = parse_framework(options.framework);
    if (!fw) {
      throw InputError({name, 0, 0}, "--framework",
                       "unknown framework '" + options.framework +
                           "'; expected megatron, automodel, torchtitan, hyperpod, axolotl or bridge");
    }
    r.framework_ = *fw;
    r.dialect_ = (d.framework == fw) ? d.dialect : "";
    if (*fw == Framework::HyperPod && r.dialect_.empty()) r.dialect_ = detect_hyperpod_dialect(*r.doc_);
    if (*fw == Framework::HyperPod && r.dialect_.empty()) r.dialect_ = "smp";
    if (*fw == Framework::Megatron && r.dialect_.empty()) {
      r.dialect_ = r.doc_->format() == Format::Script ? "script" : "yaml";
    }
    if (*fw == Framework::Torchtitan && r.dialect_.empty()) r.dialect_ = "toml";
  } else if (d.framework) {
    r.framework_ = *d.framework;
    r.dialect_ = d.dialect;
  } else {
    throw InputError({name, 0, 0}, "", "not a training recipe: " + d.reason + " (pass --framework to force one)");
  }
  r.adapter_ = &adapter_for(r.framework_);
  r.resolve_context();
  // A layout number that is not one is an error at load, naming its key.
  refuse_layout_containers(r);
  r.adapter_->read_layout(r);
  return r;
}

void Recipe::resolve_context() {
  resolve_hardware();
  resolve_model();
}

void Recipe::resolve_hardware() {
  hardware_ = options_.hardware;
  if (!hardware_.gpu.empty()) {
    auto g = normalize_gpu(hardware_.gpu);
    if (!g) throw InputError({config_path_, 0, 0}, "--gpu", "expected h100, h200 or b200, got '" + hardware_.gpu + "'");
    hardware_.gpu = *g;
    return;
  }
  // No GPU given: the file name or an instance type in the file may say.
  std::vector<std::string> hints = {stem_of(config_path_)};
  for (const auto& e : doc_->entries()) {
    if (e.path.rfind("instance_types", 0) == 0 || e.path == "instance_type") hints.push_back(e.value.str());
  }
  for (const auto& h : hints) {
    if (auto g = normalize_gpu(h)) {
      hardware_.gpu = *g;
      notes_.push_back("gpu " + *g + " inferred from '" + h + "'; pass --gpu to override");
      return;
    }
  }
}

namespace {

std::optional<long long> int_of(const std::optional<Entry>& e) {
  if (!e) return std::nullopt;
  return e->value.as_int();
}

// The recipe's own architecture fields override the preset's.
bool apply_arch_fields(const Recipe& r, ModelSpec& m) {
  bool any = false;
  auto take = [&](const char* name, int& field) {
    if (auto v = int_of(r.find_named(name)); v && *v > 0) {
      field = static_cast<int>(*v);
      any = true;
    }
  };
  take("layers", m.layers);
  take("hidden", m.hidden);
  take("heads", m.heads);
  take("kv_heads", m.kv_heads);
  take("ffn", m.ffn);
  take("vocab", m.vocab);
  take("experts", m.experts);
  take("top_k", m.top_k);
  take("moe_ffn", m.moe_ffn);
  if (m.kv_heads == 0) m.kv_heads = m.heads;
  return any;
}

}  // namespace

void Recipe::resolve_model() {
  const ModelSpec* preset = nullptr;
  std::string source;
  if (!options_.model.empty()) {
    preset = find_model_preset(options_.model);
    if (!preset) {
      std::string known;
      for (const auto& m : model_presets()) known += (known.empty() ? "" : ", ") + m.name;
      throw InputError({config_path_, 0, 0}, "--model", "unknown model preset '" + options_.model + "'; known: " + known);
    }
    source = "--model";
  }
  if (!preset) {
    std::string name = find_named("model_name") ? find_named("model_name")->value.str() : "";
    if (auto flavor = find("model.flavor"); flavor && !name.empty()) name += "-" + flavor->value.str();
    if (!name.empty() && (preset = find_model_preset(name))) source = "'" + name + "'";
  }
  if (!preset && (preset = find_model_preset(stem_of(config_path_)))) source = "the file name";
  ModelSpec m = preset ? *preset : ModelSpec{};
  bool own = apply_arch_fields(*this, m);
  if (!preset && !(own && m.layers > 0 && m.hidden > 0 && m.heads > 0)) {
    notes_.push_back("model unknown: rules that need the architecture were skipped; pass --model");
    return;
  }
  if (!preset) m.name = "custom";
  if (preset && source != "--model") notes_.push_back("model " + m.name + " inferred from " + source);
  model_ = m;
}

std::optional<Entry> Recipe::elastic_override(const std::string& doc_path) const {
  // trainer.num_nodes selects the block; it is never overridden by one.
  if (framework_ != Framework::HyperPod || dialect_ != "llmft" || doc_path == "trainer.num_nodes") return std::nullopt;
  // LLMFT's scale_config.<nodes> block overrides the base values for that node count.
  int nodes = hardware_.nodes;
  if (nodes <= 0) {
    auto n = doc_->find("trainer.num_nodes");
    if (!n || !n->value.as_int()) return std::nullopt;
    nodes = static_cast<int>(*n->value.as_int());
  }
  return doc_->find("scale_config." + std::to_string(nodes) + "." + doc_path);
}

bool Recipe::env_in_launch(const std::string& key) const {
  return key.rfind("env.", 0) == 0 && adapter_->catalog().env_root == "-";
}

std::optional<Entry> Recipe::find(const std::string& catalog_key) const {
  if (env_in_launch(catalog_key)) {
    // The file has no environment: the launch's is the recipe's.
    const auto it = launch_.env.find(catalog_key.substr(4));
    if (it == launch_.env.end()) return std::nullopt;
    Entry e;
    e.path = catalog_key;
    e.value = Value::parse(it->second);
    e.raw = it->second;
    return e;
  }
  std::string path = adapter_->doc_key(*this, catalog_key);
  if (auto e = elastic_override(path)) return e;
  if (auto e = doc_->find(path)) return e;
  const LeverDef* def = adapter_->catalog().by_key(catalog_key, dialect_);
  std::vector<std::string> aliases;
  if (def) aliases = def->aliases;
  for (const auto& pk : adapter_->catalog().plan_keys) {
    if (pk.key == catalog_key) aliases.insert(aliases.end(), pk.aliases.begin(), pk.aliases.end());
  }
  for (const auto& a : aliases) {
    if (auto e = doc_->find(adapter_->doc_key(*this, a))) return e;
  }
  return std::nullopt;
}

std::string Recipe::key_of(const std::string& name) const {
  const LeverCatalog& cat = adapter_->catalog();
  if (const LeverDef* def = cat.by_name(name, dialect_); def && !def->key.empty()) {
    auto e = find(def->key);
    return e ? e->path : adapter_->doc_key(*this, def->key);
  }
  if (const PlanKey* pk = cat.plan_key(name, dialect_)) {
    auto e = find(pk->key);
    return e ? e->path : adapter_->doc_key(*this, pk->key);
  }
  return "";
}

std::optional<Entry> Recipe::find_named(const std::string& name) const {
  const LeverCatalog& cat = adapter_->catalog();
  if (const LeverDef* def = cat.by_name(name, dialect_); def && !def->key.empty()) return find(def->key);
  if (const PlanKey* pk = cat.plan_key(name, dialect_)) return find(pk->key);
  return std::nullopt;
}

std::optional<Value> Recipe::value_or_default(const std::string& name) const {
  if (auto e = find_named(name)) return e->value;
  const LeverDef* def = adapter_->catalog().by_name(name, dialect_);
  if (!def || def->default_value.empty()) return std::nullopt;
  return Value::parse(def->default_value);
}

Plan Recipe::plan() const {
  Plan p = adapter_->plan(*this);
  if (p.world_source != "assumed") return p;
  // The file and the user are silent on the node count: take the smallest
  // that makes the layout valid, and say so.
  for (int nodes = 1; nodes <= 1024; nodes *= 2) {
    Plan trial = adapter_->plan(*this, nodes);
    if (!has_errors(adapter_->validate(*this, trial))) return trial;
  }
  return p;
}

std::vector<RuleViolation> Recipe::violations() const { return adapter_->validate(*this, plan()); }

std::vector<std::string> Recipe::notes() const {
  std::vector<std::string> out = notes_;
  Plan p = plan();
  if (p.world_source == "assumed") {
    out.push_back("node count not stated: assumed " + std::to_string(p.nodes) + " node(s) of " +
                  std::to_string(p.gpus_per_node) + " GPUs, the smallest valid for this layout; pass --nodes");
  }
  if (p.gpu.empty()) out.push_back("gpu unknown; pass --gpu h100|h200|b200");
  for (const auto& [name, text] : p.unknown) {
    out.push_back(name + " is '" + text + "' (" + key_of(name) +
                  "), known only at run time: the gate refuses to change it or anything computed from it");
  }
  if (auto e = find_named("nodes"); e && e->runtime && p.world_source == "assumed") {
    out.push_back("nodes is '" + e->raw + "' (" + e->path + "), known only at run time");
  }
  return out;
}

std::vector<LeverValue> Recipe::levers() const {
  std::vector<LeverValue> out;
  const LeverCatalog& cat = adapter_->catalog();
  for (const auto& def : cat.levers) {
    if (!def.dialect.empty() && def.dialect != dialect_) continue;
    if (!def.pattern.empty()) {
      for (const auto& e : doc_->entries()) {
        if (glob_match(def.pattern, adapter_->catalog_key(*this, e.path))) out.push_back({&def, e.path, e.value, true});
      }
      continue;
    }
    auto e = find(def.key);
    LeverValue lv{&def, e ? e->path : adapter_->doc_key(*this, def.key), std::nullopt, e.has_value()};
    if (e) lv.value = e->value;
    out.push_back(lv);
  }
  return out;
}

void Recipe::apply(const Change& c) {
  if (env_in_launch(c.key)) {
    if (c.new_value && !c.new_value->is_null()) launch_.env[c.key.substr(4)] = c.new_value->str();
    else launch_.env.erase(c.key.substr(4));
    return;
  }
  if (c.new_value && !adapter_->written_as_absent(*this, c.key, *c.new_value)) doc_->set(c.key, *c.new_value);
  else doc_->remove(c.key);
}

nlohmann::json Recipe::to_json() const {
  Plan p = plan();
  nlohmann::json levers_json = nlohmann::json::array();
  for (const auto& lv : levers()) {
    nlohmann::json j = {{"name", lv.def->name}, {"key", lv.key}, {"set", lv.set_in_file}};
    j["value"] = lv.set_in_file ? value_to_json(lv.value)
                                : (lv.def->default_value.empty() ? nlohmann::json(nullptr)
                                                                 : value_to_json(Value::parse(lv.def->default_value)));
    levers_json.push_back(j);
  }
  nlohmann::json viol = nlohmann::json::array();
  for (const auto& v : adapter_->validate(*this, p)) viol.push_back(attune::recipe::to_json(v));
  nlohmann::json model = nullptr;
  if (model_) {
    model = {{"name", model_->name}, {"layers", model_->layers}, {"hidden", model_->hidden},
             {"heads", model_->heads}, {"kv_heads", model_->kv_heads}, {"ffn", model_->ffn},
             {"vocab", model_->vocab}, {"experts", model_->experts}, {"top_k", model_->top_k}};
  }
  nlohmann::json plan_json = attune::recipe::to_json(p);
  return {{"file", config_path_},
          {"framework", to_string(framework_)},
          {"dialect", dialect_},
          {"format", to_string(doc_->format())},
          {"model", model},
          {"gpu", p.gpu.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.gpu)},
          {"plan", plan_json},
          {"levers", levers_json},
          {"violations", viol},
          {"notes", notes()}};
}

}  // namespace attune::recipe
