#include "attune/recipe/adapter.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "attune/recipe/recipe.h"
#include "attune/recipe/yaml_document.h"
#include "attune/util/error.h"
#include "attune/util/text.h"

namespace attune::recipe {

Adapter::Adapter(Framework framework) : framework_(framework) {}

const LeverCatalog& Adapter::catalog() const { return lever_catalog(to_string(framework_)); }

std::string Adapter::doc_key(const Recipe&, const std::string& catalog_key) const {
  const std::string& root = catalog().env_root;
  if (catalog_key.rfind("env.", 0) == 0 && !root.empty() && root != "-") {
    return root + "." + catalog_key.substr(4);
  }
  return catalog_key;
}

std::string Adapter::catalog_key(const Recipe&, const std::string& doc_path) const {
  const std::string& root = catalog().env_root;
  if (!root.empty() && root != "-" && doc_path.rfind(root + ".", 0) == 0) {
    return "env." + doc_path.substr(root.size() + 1);
  }
  return doc_path;
}

namespace {

// Reads the layout numbers exactly: a number the file states is a whole number
// no less than its least value, one it leaves to run time is recorded as
// unknown, and anything else is an error naming the key. Absent or null, the
// framework's default applies.
class LayoutReader {
 public:
  LayoutReader(const Recipe& recipe, Layout& layout) : recipe_(recipe), layout_(layout) {}

  std::optional<long long> stated(const std::string& name) const {
    auto e = recipe_.find_named(name);
    // AutoModel's loader turns the string `none` into Python's None (unset).
    if (!e || e->value.is_null() || (e->value.kind == ValueKind::String && to_lower(e->value.text) == "none")) {
      return std::nullopt;
    }
    if (e->runtime) {
      // The node count is the scheduler's (SLURM_NNODES): the world is then
      // the user's --nodes or assumed, as when the file is silent.
      if (name != "nodes" && name != "gpus_per_node") layout_.unknown[name] = e->raw.empty() ? e->value.str() : e->raw;
      return std::nullopt;
    }
    std::optional<long long> v;
    if (e->loader_dependent) {
      v = yaml11_integer(e->raw);
      if (!v) {
        throw InputError({recipe_.config_path(), e->line, 0}, e->path,
                         "'" + e->raw + "' is a string to PyYAML (YAML 1.1) but a number to OmegaConf and YAML 1.2: "
                         "write " + name + " as a plain decimal number");
      }
    } else if (e->value.kind == ValueKind::Int) {
      v = e->value.as_int();  // not 8.0 or 1e3: argparse's int(), TOML and the YAML loaders take neither as a count
    }
    long long least = least_value(name);
    if (!v || *v < least) {
      std::string what = least == 1 ? "a positive whole number" : "a whole number >= " + std::to_string(least);
      std::string got = "'" + e->value.str() + "'";
      if (!e->raw.empty() && e->raw != e->value.str()) got += " (written " + e->raw + ")";
      throw InputError({recipe_.config_path(), e->line, 0}, e->path, name + " must be " + what + ", got " + got);
    }
    return v;
  }

  int number(const std::string& name, int fallback) const {
    if (auto v = stated(name)) return static_cast<int>(std::min<long long>(*v, 1 << 30));
    return default_int(name, fallback);
  }

 private:
  long long least_value(const std::string& name) const {
    const LeverCatalog& cat = recipe_.adapter().catalog();
    if (const LeverDef* def = cat.by_name(name, recipe_.dialect()); def && def->min) {
      return static_cast<long long>(*def->min);
    }
    if (const PlanKey* pk = cat.plan_key(name, recipe_.dialect()); pk && pk->min) return static_cast<long long>(*pk->min);
    return 1;
  }

  int default_int(const std::string& name, int fallback) const {
    const LeverDef* def = recipe_.adapter().catalog().by_name(name, recipe_.dialect());
    if (!def || def->default_value.empty()) return fallback;
    auto v = Value::parse(def->default_value).as_int();
    return v ? static_cast<int>(*v) : fallback;
  }

  const Recipe& recipe_;
  Layout& layout_;
};

}  // namespace

Layout Adapter::read_layout(const Recipe& recipe) const {
  Layout l;
  LayoutReader read(recipe, l);
  l.nodes = read.number("nodes", 0);
  l.gpus_per_node = read.number("gpus_per_node", 0);
  l.tp = read.number("tp", 1);
  l.pp = read.number("pp", 1);
  l.vp = read.number("vp", 1);
  l.cp = read.number("cp", 1);
  l.ep = read.number("ep", 1);
  l.etp = read.number("etp", l.tp);
  l.dp_shard = read.number("dp_shard", 0);
  l.dp_replicate = read.number("dp_replicate", 1);
  l.dp_explicit = read.number("dp", 0);
  l.mbs = read.number("mbs", 1);
  l.gbs = read.stated("gbs");
  if (l.gbs && *l.gbs <= 0) l.gbs.reset();  // torchtitan: -1 = local batch x DP
  l.grad_accum = read.stated("grad_accum");
  l.seq_len = read.stated("seq_len").value_or(0);
  return l;
}

std::string Adapter::recompute(const Recipe& recipe) const {
  auto e = recipe.find_named("recompute");
  if (!e) {
    const LeverDef* def = catalog().by_name("recompute", recipe.dialect());
    if (!def || def->default_value.empty()) return "none";
    Value d = Value::parse(def->default_value);
    if (auto b = d.as_bool()) return *b ? "full" : "none";
    return d.text;
  }
  if (e->value.is_null()) return "none";
  if (e->value.kind == ValueKind::Bool || e->value.kind == ValueKind::Int) {
    if (auto b = e->value.as_bool()) return *b ? "full" : "none";
  }
  return e->value.str();
}

std::string Adapter::edit_lever(const Recipe&, const std::string& name) const { return name; }

int Adapter::shard_group(const Recipe&, const Layout& l, const Plan&) const { return l.dp_shard > 0 ? l.dp_shard : 0; }

void Adapter::derive_dp(const Layout& l, Plan& p) const {
  int mp = std::max(1, l.tp * l.pp * l.cp);
  p.dp = std::max(1, p.world / mp);
  if (l.dp_explicit > 0) p.dp = l.dp_explicit;
}

Plan Adapter::plan(const Recipe& recipe, int assumed_nodes) const {
  Layout l = read_layout(recipe);
  Plan p;
  p.framework = to_string(framework_);
  p.dialect = recipe.dialect();
  p.model = recipe.model() ? recipe.model()->name : "";
  p.gpu = recipe.hardware().gpu;
  p.tp = l.tp; p.pp = l.pp; p.vp = l.vp; p.cp = l.cp; p.ep = l.ep; p.etp = l.etp;
  p.mbs = l.mbs;
  p.seq_len = l.seq_len;
  p.recompute = recompute(recipe);
  p.precision = precision(recipe);
  p.unknown = l.unknown;

  const Hardware& hw = recipe.hardware();
  p.gpus_per_node = hw.gpus_per_node > 0 ? hw.gpus_per_node : (l.gpus_per_node > 0 ? l.gpus_per_node : 8);
  p.nodes = hw.nodes > 0 ? hw.nodes : l.nodes;
  p.world_source = hw.nodes > 0 ? recipe.hardware_source() : (l.nodes > 0 ? "file" : "assumed");
  if (p.nodes <= 0) p.nodes = std::max(1, assumed_nodes);
  p.world = p.nodes * p.gpus_per_node;

  derive_dp(l, p);
  p.dp_shard = std::max(0, shard_group(recipe, l, p));
  long long per_step = static_cast<long long>(p.mbs) * p.dp;
  // One pass of the step per DP rank: the local batch (split into micro-batches
  // by a pipeline) or the micro batch itself.
  long long per_pass = static_cast<long long>(l.local_batch > 0 ? l.local_batch : p.mbs) * p.dp;
  switch (batch_rule(recipe)) {
    case BatchRule::Explicit:
    case BatchRule::Torchtitan:
      p.gbs = l.gbs ? *l.gbs : per_pass;
      p.gbs_rule = l.gbs ? "explicit" : (l.local_batch > 0 ? "implied: local_batch*dp" : "implied: mbs*dp");
      p.grad_accum = per_step > 0 ? std::max(1LL, p.gbs / per_step) : 1;
      break;
    case BatchRule::SmpImplied:
      p.gbs = per_step;
      p.grad_accum = 1;
      p.gbs_rule = "implied: train_batch_size*world/(tp*cp)";
      break;
    case BatchRule::Axolotl:
      p.grad_accum = l.grad_accum.value_or(1);
      p.gbs = per_step * p.grad_accum;
      p.gbs_rule = "implied: micro_batch_size*gradient_accumulation_steps*world/(tp*cp)";
      break;
  }
  if (!l.batch_phases.empty()) {
    // The schedule is the global batch: its largest phase is what the run
    // reaches, and each phase sets the micro-batches of its steps.
    p.batch_phases = l.batch_phases;
    p.gbs = *std::max_element(l.batch_phases.begin(), l.batch_phases.end());
    p.gbs_rule = "schedule";
    p.grad_accum = per_step > 0 ? std::max(1LL, p.gbs / per_step) : 1;
  }
  p.tokens_per_step = p.gbs * p.seq_len;
  if (auto packing = recipe.find_named("sample_packing"); packing && packing->value.as_bool().value_or(false)) {
    p.pack_tokens = static_cast<long long>(p.mbs) * p.seq_len;
  }
  return p;
}

std::vector<Change> Adapter::translate(const Recipe& recipe, const LeverDef& lever, const Value& value) const {
  Value checked = check_lever_value(recipe.config_path(), lever, value);
  std::string key = doc_key(recipe, lever.key);
  auto existing = recipe.find(lever.key);
  if (existing) key = existing->path;
  Change c;
  c.key = key;
  if (existing) c.old_value = existing->value;
  c.new_value = checked;
  return {c};
}

Value Adapter::document_count(const Recipe&, const std::string&, long long count) const { return Value::integer(count); }

void Adapter::framework_rules(const Recipe&, const Plan&, std::vector<RuleViolation>&) const {}

namespace {

bool matches_enum(const LeverDef& lever, const std::string& text) {
  for (const auto& v : lever.values) {
    if (to_lower(v) == to_lower(text)) return true;
  }
  return false;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out;
}

}  // namespace

Value check_lever_value(const std::string& file, const LeverDef& lever, const Value& value) {
  auto fail = [&](const std::string& expected) -> Value {
    throw InputError({file, 0, 0}, lever.key.empty() ? lever.name : lever.key,
                     "expected " + expected + ", got '" + value.str() + "'");
  };
  switch (lever.type) {
    case LeverType::Int: {
      auto v = value.as_int();
      if (!v) return fail("an integer");
      if (lever.min && *v < *lever.min) return fail("an integer >= " + std::to_string(static_cast<long long>(*lever.min)));
      if (lever.max && *v > *lever.max) return fail("an integer <= " + std::to_string(static_cast<long long>(*lever.max)));
      return Value::parse(std::to_string(*v));
    }
    case LeverType::Float: {
      auto v = value.as_double();
      if (!v || std::isnan(*v)) return fail("a number");
      if (lever.min && *v < *lever.min) return fail("a number >= " + std::to_string(*lever.min));
      if (lever.max && *v > *lever.max) return fail("a number <= " + std::to_string(*lever.max));
      return value;
    }
    case LeverType::Bool: {
      auto b = value.as_bool();
      if (!b) return fail("true or false");
      return Value::boolean(*b);
    }
    case LeverType::Enum:
      if (value.is_null() && matches_enum(lever, "null")) return value;
      if (!matches_enum(lever, value.str())) return fail("one of: " + join(lever.values));
      return value;
    case LeverType::String:
    case LeverType::List:
      return value;
  }
  return value;
}

}  // namespace attune::recipe
