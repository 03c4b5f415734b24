// LeverCatalog: every throughput lever of one framework, as data
// (skills/levers/<framework>.yaml, compiled in). Each lever has a canonical
// name, the framework key it maps to, its type and legal values, what it trades
// and its constraints. Adapters map canonical names to keys through it; the gate
// uses it to know which keys are throughput-only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attune::recipe {

enum class LeverType { Int, Float, Bool, Enum, String, List };

// How the correctness gate treats a change of this lever.
enum class LeverSafety {
  Throughput,  // changes speed/memory only
  Numerics,    // grey: changes numerics; needs an explicit --allow <allow_name>
};

struct LeverDef {
  std::string name;                  // canonical name ("tp") or the framework's own ("manual_gc")
  std::string key;                   // key path in the document ("--tensor-model-parallel-size")
  std::vector<std::string> aliases;  // other spellings of the same key
  std::string pattern;               // instead of key: a glob over key paths ("env.NCCL_*")
  LeverType type = LeverType::String;
  std::vector<std::string> values;   // legal values for Enum
  std::optional<double> min;
  std::optional<double> max;
  std::string default_value;         // framework default when the key is absent ("" = none)
  std::string trades;                // what it trades, in plain words
  std::vector<std::string> constraints;  // human-readable rules it must satisfy
  LeverSafety safety = LeverSafety::Throughput;
  std::string allow_name;            // for Numerics: the name --allow takes ("fp8")
  std::string dialect;               // HyperPod: smp | nemo1 | checkpointless | llmft; torchtitan: toml | python ("" = all)
};

struct RefusedKey {  // members of a lever pattern family that are not throughput-only
  std::string key;   // exact key or glob
  std::string reason;
};

// A setting the plan reads that is not a lever (global batch, sequence length,
// architecture fields): the adapter needs its key, the gate keeps it frozen.
struct PlanKey {
  std::string name;                  // "gbs", "seq_len", "layers", ...
  std::string key;
  std::vector<std::string> aliases;
  std::string dialect;               // HyperPod or torchtitan dialect ("" = all)
  std::optional<double> min;         // least value a count takes (default 1; torchtitan's -1 = implied)
};

struct LeverCatalog {
  std::string framework;             // "megatron", "automodel", "torchtitan", "hyperpod", "axolotl", "bridge"
  std::string title;                 // "Megatron-LM"
  std::string env_root;              // where environment variables live in the file ("" = `env.NAME` itself)
  std::vector<LeverDef> levers;
  std::vector<PlanKey> plan_keys;
  std::vector<RefusedKey> refused;   // e.g. env.NVTE_ALLOW_NONDETERMINISTIC_ALGO changes numerics

  const PlanKey* plan_key(std::string_view name, std::string_view dialect = "") const;

  // Lever by canonical name (first match for the dialect).
  const LeverDef* by_name(std::string_view name, std::string_view dialect = "") const;
  // Lever whose key, alias or pattern matches `key`.
  const LeverDef* by_key(std::string_view key, std::string_view dialect = "") const;
};

// The built-in catalog of a framework; throws std::out_of_range if unknown.
const LeverCatalog& lever_catalog(std::string_view framework);
// Parses a catalog from YAML text (used for the built-ins and by tests).
// Throws InputError naming `name` and the line on a malformed catalog.
LeverCatalog parse_lever_catalog(const std::string& name, const std::string& yaml_text);
// Glob match with '*' (any run) and '?' (one character).
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace attune::recipe
