// Megatron-LM's launch contracts. A launch script (examples/*/train_*.sh)
// runs torchrun itself: attune runs `bash SCRIPT [launch.args]` once per
// node in the Megatron-LM checkout, with the script's node and GPU variables
// set to the run's. A CI YAML (tests/functional_tests/.../model_config.yaml)
// is launched as Megatron's CI harness launches it
// (tests/functional_tests/shell_test_utils/_run_training.sh): its paths
// substituted, MODEL_ARGS turned into flags, ENV_VARS exported, torchrun
// pretrain_gpt.py.
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "adapters.h"
#include "attune/recipe/script_document.h"
#include "attune/util/error.h"

namespace attune::recipe {

namespace {

// ------------------------------------------------------------ launch scripts

// A script that submits its own job or step (sbatch, salloc, srun) would run
// outside the job attune watches: its runs would be unmonitored and unpaid.
void refuse_self_submitting(const Recipe& recipe) {
  const auto* doc = dynamic_cast<const ScriptDocument*>(&recipe.document());
  if (!doc) return;
  const std::string& text = doc->text();
  const auto& words = doc->words();
  static const std::set<std::string> kSubmitters = {"sbatch", "srun", "salloc"};
  static const std::set<std::string> kBefore = {";", "&&", "||", "|", "&", "(", "{", "then", "do", "else", "$(", "`",
                                                "exec", "time", "nohup"};
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string word = text.substr(words[i].first, words[i].second - words[i].first);
    if (!kSubmitters.count(word)) continue;
    const bool line_start = i == 0 || text.find('\n', words[i - 1].second) < words[i].first;
    const std::string prev = i == 0 ? "" : text.substr(words[i - 1].first, words[i - 1].second - words[i - 1].first);
    if (!line_start && !kBefore.count(prev)) continue;
    int line = 1;
    for (std::size_t at = 0; at < words[i].first; ++at) line += text[at] == '\n';
    throw InputError({recipe.config_path(), line, 0}, word,
                     fmt::format("the script runs `{}` itself: its job or step would run outside the run attune "
                                 "launches and watches (not measured, not stopped, not charged). Give the wrapper the "
                                 "script's training command instead (launch.command), or a script that runs torchrun",
                                 word));
  }
}

// The variables a launch script reads its node count and GPUs per node from
// (`--nnodes $NUM_NODES`, `--nproc_per_node ${PROCS:-8}`): each gets the
// run's value. Slurm's own variables are Slurm's to set.
void export_node_variables(const Recipe& recipe, std::map<std::string, std::string>& env) {
  auto names_in = [](const std::string& raw) {
    std::vector<std::string> out;
    for (std::size_t at = raw.find('$'); at != std::string::npos; at = raw.find('$', at + 1)) {
      std::size_t b = at + 1 + (at + 1 < raw.size() && raw[at + 1] == '{');
      std::size_t e = b;
      while (e < raw.size() && (std::isalnum(static_cast<unsigned char>(raw[e])) || raw[e] == '_')) ++e;
      if (e > b && !std::isdigit(static_cast<unsigned char>(raw[b]))) out.push_back(raw.substr(b, e - b));
    }
    return out;
  };
  const Plan plan = recipe.plan();
  for (const auto& [lever, value] : {std::pair{"nodes", plan.nodes}, std::pair{"gpus_per_node", plan.gpus_per_node}}) {
    auto e = recipe.find_named(lever);
    if (!e || value <= 0) continue;
    for (const auto& name : names_in(e->raw)) {
      if (name.rfind("SLURM_", 0) != 0) env.emplace(name, std::to_string(value));
    }
  }
}

FrameworkLaunch script_launch(const Recipe& recipe, const WrittenRecipe& files) {
  refuse_self_submitting(recipe);
  FrameworkLaunch fl;
  if (recipe.launch().command.empty()) {
    required_workdir(recipe, "a Megatron-LM launch script runs pretrain_gpt.py from the Megatron-LM checkout");
    fl.command = {"bash", files.launched};
  }
  export_node_variables(recipe, fl.env);
  return fl;
}

// ------------------------------------------------------------ CI YAML

// What _run_training.sh exports before it reads the YAML (each ${X:-default}).
const std::pair<const char*, const char*> kCiNcclDefaults[] = {
    {"NCCL_PROTO", "simple"},        {"NCCL_ALGO", "Ring"},   {"NCCL_COLLNET_ENABLE", "0"},
    {"NCCL_NVLS_ENABLE", "0"},       {"NCCL_TUNER_PLUGIN", ""}, {"NCCL_BUFFSIZE", "4194304"},
    {"TORCH_NCCL_AVOID_RECORD_STREAMS", "1"},
};

// envsubst with the harness's variables: `$NAME` and `${NAME}` of a variable
// the harness has are replaced; any other would abort the harness
// (`set -u`: "NAME: unbound variable").
std::string substitute(const Recipe& recipe, const Entry& e, const std::string& text,
                       const std::map<std::string, std::string>& vars) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] != '$') {
      out += text[i++];
      continue;
    }
    const bool braced = i + 1 < text.size() && text[i + 1] == '{';
    std::size_t b = i + 1 + braced, end = b;
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
    if (end == b || (braced && (end >= text.size() || text[end] != '}'))) {
      out += text[i++];
      continue;
    }
    const std::string name = text.substr(b, end - b);
    const auto it = vars.find(name);
    if (it == vars.end())
      throw InputError({recipe.config_path(), e.line, 0}, e.path,
                       fmt::format("${} is not set: Megatron-LM's CI harness would stop here ({}: unbound variable); "
                                   "set it in the wrapper's launch.env",
                                   name, name));
    out += it->second;
    i = end + braced;
  }
  return out;
}

// One MODEL_ARGS entry as _run_training.sh turns it into arguments.
void append_flag(const Recipe& recipe, const Entry& e, const std::string& flag, const std::map<std::string, std::string>& vars,
                 std::vector<std::string>& argv) {
  if (e.value.kind == ValueKind::List)
    throw InputError({recipe.config_path(), e.line, 0}, e.path,
                     "a YAML list has no form in Megatron-LM's CI harness: write the values as \"[a b]\"");
  if (e.value.kind == ValueKind::Bool && e.value.as_bool().value_or(false)) {
    argv.push_back(flag);  // `true`: the flag alone
    return;
  }
  const std::string text = e.value.kind == ValueKind::Null ? "null" : substitute(recipe, e, e.value.text, vars);
  if (e.value.kind == ValueKind::String && e.value.text.empty()) return;  // "" drops the entry
  argv.push_back(flag);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    // A bracketed list: the brackets go, its words are several arguments.
    std::string word;
    for (char c : text.substr(1, text.size() - 2)) {
      if (std::isspace(static_cast<unsigned char>(c))) {
        if (!word.empty()) argv.push_back(word);
        word.clear();
      } else {
        word += c;
      }
    }
    if (!word.empty()) argv.push_back(word);
    return;
  }
  argv.push_back(text);  // one argument (quoted when it holds a space, '|' or parentheses)
}

FrameworkLaunch ci_yaml_launch(const Recipe& recipe, const WrittenRecipe& files) {
  FrameworkLaunch fl;
  for (const auto& [name, value] : kCiNcclDefaults) fl.env[name] = value;
  // run_ci_test.sh's mandatory paths, each the run directory's; the wrapper's launch.env wins.
  std::map<std::string, std::string> vars = {
      {"OUTPUT_PATH", files.dir},
      {"TENSORBOARD_PATH", files.dir + "/tensorboard"},
      {"CHECKPOINT_SAVE_PATH", files.dir + "/checkpoints"},
      {"CHECKPOINT_LOAD_PATH", files.dir + "/checkpoints"},
      {"DATA_CACHE_PATH", files.dir + "/data-cache"},
  };
  for (const auto& [name, value] : recipe.launch().env) vars[name] = value;
  std::vector<std::string> flags;
  for (const auto& e : recipe.document().entries()) {
    if (e.path.rfind("ENV_VARS.", 0) == 0) {
      fl.env[e.path.substr(9)] = e.value.kind == ValueKind::Null ? "null" : e.value.text;
    } else if (e.path.rfind("MODEL_ARGS.", 0) == 0) {
      std::string flag = e.path.substr(11);
      const auto bracket = flag.find('[');
      if (bracket != std::string::npos)
        throw InputError({recipe.config_path(), e.line, 0}, e.path,
                         "a YAML list has no form in Megatron-LM's CI harness: write the values as \"[a b]\"");
      append_flag(recipe, e, flag, vars, flags);
    }
  }
  if (recipe.launch().command.empty()) {
    required_workdir(recipe, "pretrain_gpt.py is a script in the Megatron-LM checkout");
    fl.command = {"torchrun", "pretrain_gpt.py"};
    fl.command.insert(fl.command.end(), flags.begin(), flags.end());
  }
  for (const auto& [name, value] : vars) fl.env.emplace(name, value);
  return fl;
}

}  // namespace

FrameworkLaunch MegatronAdapter::launch(const Recipe& recipe, const WrittenRecipe& files) const {
  return recipe.dialect() == "script" ? script_launch(recipe, files) : ci_yaml_launch(recipe, files);
}

}  // namespace attune::recipe
