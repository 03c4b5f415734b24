// Framework: which training stack a recipe file is for, and how attune tells
// from a file's content alone (a flag or a section only that stack uses).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "attune/recipe/document.h"

namespace attune::recipe {

enum class Framework { Megatron, AutoModel, Torchtitan, HyperPod, Axolotl, Bridge };

// "megatron", "automodel", "torchtitan", "hyperpod", "axolotl", "bridge".
std::string to_string(Framework f);
// Accepts the names above and common spellings ("megatron-lm", "megatron-bridge",
// "nemo-automodel", "sagemaker-hyperpod"); nullopt if unknown.
std::optional<Framework> parse_framework(std::string_view name);
std::string framework_title(Framework f);  // "Megatron-LM", ...

struct Detection {
  std::optional<Framework> framework;  // nullopt: not a training recipe
  std::string dialect;                 // HyperPod: smp | nemo1 | checkpointless | llmft; Megatron: script | yaml;
                                       // torchtitan: toml | python (its config generations)
  std::string reason;                  // why (the evidence), or why it is not a recipe
};

Detection detect_framework(const Document& doc);
// HyperPod dialect of a document known to be HyperPod ("" if none fits).
std::string detect_hyperpod_dialect(const Document& doc);

}  // namespace attune::recipe
