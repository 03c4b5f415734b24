// Model presets: parsing of skills/models.yaml (compiled in) and name matching.
//
// Matching order in find_model_preset:
//   1. exact id, alias or display name, ignoring case;
//   2. the same after normalising (lower case, letters and digits only), so
//      "Llama-3.1-8B", "llama3.1_8b" and "llama-3.1-8b" are one name;
//   3. the normalised name contains a normalised alias: the longest such alias
//      wins ("Qwen3-30B-A3B-Instruct" -> qwen3-30b-a3b, not qwen3-8b). An alias
//      ending in a digit must not be followed by a digit (and one starting with a
//      digit must not follow a digit), so "deepseek-v3" does not match
//      "deepseek_v3 16B". Names of distilled models ("DeepSeek-R1-Distill-
//      Qwen-32B") are matched on the part after "distill" only: the student's
//      architecture is the one that trains.
#include "attune/recipe/model_spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "attune/util/embedded.h"
#include "attune/util/error.h"
#include "attune/util/text.h"

namespace attune::recipe {
namespace {

constexpr const char* kModelsPath = "skills/models.yaml";

SourceLocation where(const YAML::Node& node) {
  SourceLocation loc;
  loc.file = kModelsPath;
  const YAML::Mark mark = node.Mark();
  if (mark.line >= 0) {
    loc.line = mark.line + 1;
    loc.column = mark.column + 1;
  }
  return loc;
}

[[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& message) {
  throw InputError(where(node), key, message);
}

std::string text(const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) fail(node, key, "expected a single value");
  return node.Scalar();
}

int integer(const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) fail(node, key, "expected an integer");
  try {
    const int v = node.as<int>();
    if (v < 0) fail(node, key, "must not be negative");
    return v;
  } catch (const YAML::Exception&) {
    fail(node, key, "expected an integer, got '" + node.Scalar() + "'");
  }
}

bool boolean(const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) fail(node, key, "expected true or false");
  try {
    return node.as<bool>();
  } catch (const YAML::Exception&) {
    fail(node, key, "expected true or false, got '" + node.Scalar() + "'");
  }
}


std::string normalise(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c)) out += static_cast<char>(std::tolower(c));
  }
  return out;
}

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Whether `hay` contains `needle` at a position whose neighbours do not extend
// a number at either end of the needle.
bool contains_bounded(const std::string& hay, const std::string& needle) {
  if (needle.empty()) return false;
  for (size_t pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + 1)) {
    const size_t end = pos + needle.size();
    const bool left_ok = pos == 0 || !is_digit(needle.front()) || !is_digit(hay[pos - 1]);
    const bool right_ok = end == hay.size() || !is_digit(needle.back()) || !is_digit(hay[end]);
    if (left_ok && right_ok) return true;
  }
  return false;
}

ModelSpec parse_model(const YAML::Node& node) {
  if (!node.IsMap()) fail(node, "", "each model preset must be a mapping");
  ModelSpec m;
  bool has[6] = {false, false, false, false, false, false};  // layers hidden heads kv ffn vocab
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string field = text(it->first, "");
    const YAML::Node v = it->second;  // a copy: it-> yields a temporary proxy
    if (field == "name") {
      m.name = text(v, field);
    } else if (field == "display") {
      m.display = text(v, field);
    } else if (field == "aliases") {
      if (!v.IsSequence()) fail(v, field, "expected a list");
      for (const auto& a : v) m.aliases.push_back(text(a, field));
    } else if (field == "layers") {
      m.layers = integer(v, field);
      has[0] = true;
    } else if (field == "hidden") {
      m.hidden = integer(v, field);
      has[1] = true;
    } else if (field == "heads") {
      m.heads = integer(v, field);
      has[2] = true;
    } else if (field == "kv_heads") {
      m.kv_heads = integer(v, field);
      has[3] = true;
    } else if (field == "head_dim") {
      m.head_dim = integer(v, field);
    } else if (field == "ffn") {
      m.ffn = integer(v, field);
      has[4] = true;
    } else if (field == "vocab") {
      m.vocab = integer(v, field);
      has[5] = true;
    } else if (field == "max_seq") {
      m.max_seq = integer(v, field);
    } else if (field == "tied_embeddings") {
      m.tied_embeddings = boolean(v, field);
    } else if (field == "activation") {
      m.activation = text(v, field);
    } else if (field == "experts") {
      m.experts = integer(v, field);
    } else if (field == "top_k") {
      m.top_k = integer(v, field);
    } else if (field == "shared_experts") {
      m.shared_experts = integer(v, field);
    } else if (field == "moe_ffn") {
      m.moe_ffn = integer(v, field);
    } else if (field == "dense_layers") {
      m.dense_layers = integer(v, field);
    } else if (field == "q_lora_rank") {
      m.q_lora_rank = integer(v, field);
    } else if (field == "kv_lora_rank") {
      m.kv_lora_rank = integer(v, field);
    } else if (field == "qk_nope_head_dim") {
      m.qk_nope_head_dim = integer(v, field);
    } else if (field == "qk_rope_head_dim") {
      m.qk_rope_head_dim = integer(v, field);
    } else if (field == "v_head_dim") {
      m.v_head_dim = integer(v, field);
    } else {
      fail(it->first, field, "unknown model field");
    }
  }
  if (m.name.empty()) fail(node, "name", "model preset has no name");
  static const char* const kRequired[6] = {"layers", "hidden", "heads", "kv_heads", "ffn", "vocab"};
  for (int i = 0; i < 6; ++i) {
    if (!has[i]) fail(node, m.name, std::string("model preset has no ") + kRequired[i]);
  }
  if (m.layers == 0 || m.hidden == 0 || m.heads == 0 || m.kv_heads == 0 || m.vocab == 0) {
    fail(node, m.name, "layers, hidden, heads, kv_heads and vocab must be positive");
  }
  if (m.heads % m.kv_heads != 0) fail(node, m.name, "heads must be a multiple of kv_heads");
  const bool moe_fields = m.top_k || m.shared_experts || m.moe_ffn || m.dense_layers;
  if (m.experts == 0 && moe_fields) fail(node, m.name, "MoE fields on a dense model");
  if (m.experts > 0 && (m.top_k == 0 || m.top_k > m.experts || m.moe_ffn == 0)) {
    fail(node, m.name, "a MoE preset needs 0 < top_k <= experts and moe_ffn");
  }
  if (m.dense_layers >= m.layers) fail(node, m.name, "dense_layers must be below layers");
  return m;
}

std::vector<ModelSpec> load_presets() {
  const EmbeddedFile* file = find_embedded(kModelsPath);
  if (file == nullptr) {
    throw InputError(SourceLocation{kModelsPath, 0, 0}, "", "built-in model presets are missing");
  }
  YAML::Node root;
  try {
    root = YAML::Load(file->content);
  } catch (const YAML::ParserException& e) {
    SourceLocation loc{kModelsPath, e.mark.line >= 0 ? e.mark.line + 1 : 0,
                       e.mark.column >= 0 ? e.mark.column + 1 : 0};
    throw InputError(loc, "", "malformed YAML: " + e.msg);
  }
  if (!root.IsSequence()) fail(root, "", "the model presets must be a list");
  std::vector<ModelSpec> out;
  for (const auto& node : root) {
    ModelSpec m = parse_model(node);
    for (const auto& other : out) {
      if (other.name == m.name) fail(node, m.name, "duplicate model preset");
      for (const auto& a : m.aliases) {
        const std::string na = normalise(a);
        if (na == normalise(other.name) ||
            std::any_of(other.aliases.begin(), other.aliases.end(),
                        [&](const std::string& b) { return normalise(b) == na; })) {
          fail(node, a, "alias is also a name of preset '" + other.name + "'");
        }
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

// Every spelling of a preset: id, display name, aliases.
std::vector<std::string> spellings(const ModelSpec& m) {
  std::vector<std::string> out{m.name};
  if (!m.display.empty()) out.push_back(m.display);
  out.insert(out.end(), m.aliases.begin(), m.aliases.end());
  return out;
}

}  // namespace

const std::vector<ModelSpec>& model_presets() {
  static const std::vector<ModelSpec> presets = load_presets();
  return presets;
}

const ModelSpec* find_model_preset(std::string_view name) {
  const auto& presets = model_presets();
  const std::string wanted = to_lower(name);
  if (wanted.empty()) return nullptr;
  for (const auto& m : presets) {
    for (const auto& s : spellings(m)) {
      if (to_lower(s) == wanted) return &m;
    }
  }
  std::string norm = normalise(name);
  if (norm.empty()) return nullptr;
  for (const auto& m : presets) {
    for (const auto& s : spellings(m)) {
      if (normalise(s) == norm) return &m;
    }
  }
  if (const size_t d = norm.rfind("distill"); d != std::string::npos) {
    norm = norm.substr(d + 7);
  }
  const ModelSpec* best = nullptr;
  size_t best_len = 0;
  for (const auto& m : presets) {
    for (const auto& s : spellings(m)) {
      const std::string ns = normalise(s);
      if (ns.size() > best_len && contains_bounded(norm, ns)) {
        best = &m;
        best_len = ns.size();
      }
    }
  }
  return best;
}

int ModelSpec::mlp_matrices() const {
  return activation.empty() || contains_lower(activation, "glu") ? 3 : 2;
}

}  // namespace attune::recipe
