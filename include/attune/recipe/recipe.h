// Recipe: a training recipe as attune holds it — the framework's own file as a
// Document, the adapter that knows its keys, and what the user supplied beside
// it (model, hardware; from flags or the attune wrapper file). It answers "what
// are the levers and the plan" and applies one lever edit with its follow-ups.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/recipe/adapter.h"
#include "attune/recipe/document.h"
#include "attune/recipe/framework.h"
#include "attune/recipe/hardware.h"
#include "attune/recipe/launch_settings.h"
#include "attune/recipe/model_spec.h"

namespace attune::recipe {

struct LeverValue {
  const LeverDef* def = nullptr;
  std::string key;              // document key
  std::optional<Value> value;   // value in the file
  bool set_in_file = false;     // false: framework default (def->default_value)
};

class Recipe {
 public:
  // Loads a recipe file or an attune wrapper file (`*.attune.yaml`, or any YAML
  // with `config:` and `framework:`/`hardware:`; or a wrapper whose
  // launch.command is a torchtitan command line naming --module and --config,
  // which is then the recipe: config_path() and wrapper_path() both name it).
  // Throws InputError when the file is malformed, not a recipe, or its
  // framework is unknown.
  static Recipe load(const std::string& path, const RecipeOptions& options = {});
  // Builds a recipe from text already in memory (tests, benchmarks).
  static Recipe from_text(const std::string& name, std::string text, const RecipeOptions& options = {});
  // Builds a recipe from a parsed document (named by doc->name()).
  static Recipe from_document(std::unique_ptr<Document> doc, const RecipeOptions& options = {});

  Recipe(Recipe&&) noexcept;
  Recipe& operator=(Recipe&&) noexcept;
  Recipe(const Recipe& other);
  ~Recipe();

  Framework framework() const { return framework_; }
  const std::string& dialect() const { return dialect_; }
  const Adapter& adapter() const { return *adapter_; }
  const Document& document() const { return *doc_; }
  Document& document() { return *doc_; }
  const std::string& config_path() const { return config_path_; }  // the framework file
  const std::string& wrapper_path() const { return wrapper_path_; }  // "" when none
  const RecipeOptions& options() const { return options_; }
  // The wrapper's launch: and measure: sections (defaults without a wrapper).
  const LaunchSettings& launch() const { return launch_; }
  const MeasureSettings& measure() const { return measure_; }

  // Resolved model: preset plus the recipe's own architecture fields; nullopt
  // when neither the recipe nor the user names one.
  const std::optional<ModelSpec>& model() const { return model_; }
  const Hardware& hardware() const { return hardware_; }  // from flags or wrapper; 0 = unknown
  // Where the node count came from when the file is overridden: "flags" or "wrapper".
  const std::string& hardware_source() const { return hardware_source_; }

  // Value of a catalog key (lever or plan key, aliases tried), or nullopt;
  // `env.NAME` of a framework whose file has no environment section is the
  // launch's (the wrapper's launch.env).
  std::optional<Entry> find(const std::string& catalog_key) const;
  // HyperPod LLMFT: the value a scale_config.<nodes> block sets for `doc_path`
  // at the recipe's node count, which overrides the base value.
  std::optional<Entry> elastic_override(const std::string& doc_path) const;
  // Value of a canonical lever or plan key by name, as the file states it
  // (nullopt when the file is silent).
  std::optional<Entry> find_named(const std::string& name) const;
  // What the framework runs with: the file's value of lever `name`, else the
  // catalog's default for it (the framework's own default, e.g. false for
  // Megatron's --use-distributed-optimizer); nullopt when neither says.
  std::optional<Value> value_or_default(const std::string& name) const;
  // The document key for a canonical name ("" when the catalog has none).
  std::string key_of(const std::string& name) const;

  Plan plan() const;
  std::vector<RuleViolation> violations() const;
  std::vector<LeverValue> levers() const;
  std::vector<std::string> notes() const;  // what was assumed and why

  // Applies one edit: LEVER is a canonical name or a raw key path. Re-solves
  // follow-ups; throws InputError (and leaves the document unchanged) when the
  // edit is unknown, ill-typed, breaks a rule or cannot keep the global batch.
  EditResult set(const std::string& lever_or_key, const std::string& value_text, bool allow_new_key = false);

  // Applies a document change and records it (used by adapters' solving).
  // An `env.NAME` change of a framework whose file has no environment
  // section goes into the launch's environment (launch().env).
  void apply(const Change& change);
  nlohmann::json to_json() const;  // framework, plan, levers, violations, notes

 private:
  Recipe() = default;
  static Recipe load_command_recipe(const std::string& path, std::string text, const RecipeOptions& options);
  // `env.NAME` of a framework whose variables come from the launch, not the file.
  bool env_in_launch(const std::string& key) const;
  void resolve_context();
  void resolve_model();
  void resolve_hardware();

  std::unique_ptr<Document> doc_;
  Framework framework_ = Framework::Megatron;
  std::string dialect_;
  const Adapter* adapter_ = nullptr;
  RecipeOptions options_;
  std::string config_path_;
  std::string wrapper_path_;
  Hardware file_hardware_;  // what the wrapper says
  std::optional<ModelSpec> model_;
  Hardware hardware_;
  std::string hardware_source_ = "flags";
  LaunchSettings launch_;
  MeasureSettings measure_;
  std::vector<std::string> notes_;
};

}  // namespace attune::recipe
