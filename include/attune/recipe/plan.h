// Plan: the canonical view of a recipe's layout and batch — what every
// framework's keys come down to (world, TP/PP/VP/CP/EP, DP, micro and global
// batch, grad accumulation, sequence length, recompute, precision). Policies,
// the simulator and the gate reason about Plans, never about raw keys.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attune::recipe {

struct Plan {
  std::string framework;
  std::string dialect;
  std::string model;         // preset id or name from the recipe ("" if unknown)
  std::string gpu;           // h100 | h200 | b200 ("" if unknown)
  int nodes = 0;
  int gpus_per_node = 0;
  int world = 0;
  std::string world_source;  // file | flags | wrapper | assumed
  int tp = 1;
  int pp = 1;
  int vp = 1;                // virtual stages per pipeline rank
  int cp = 1;
  int ep = 1;
  int etp = 1;
  int dp = 1;                // data-parallel replicas (world / model-parallel size)
  int dp_shard = 0;          // FSDP/ZeRO-3 sharding group: DP ranks (CP excluded) that parameters,
                             // gradients and optimizer state are sharded over (0 = parameters not sharded)
  int mbs = 1;               // micro batch per GPU (with torchtitan/AutoModel PP: the pipeline micro-batch)
  long long gbs = 0;         // global batch in samples per optimizer step
  long long grad_accum = 1;  // micro-batches per step per DP rank (gbs = mbs * dp * grad_accum)
  long long seq_len = 0;
  long long tokens_per_step = 0;
  std::string gbs_rule;      // how the global batch is determined ("explicit", "implied: mbs*dp", "schedule", ...)
  // Under a batch schedule, every phase's global batch (gbs is the largest);
  // each must divide into micro-batches of mbs*dp.
  std::vector<long long> batch_phases;
  // With sample packing into bins of micro_batch_size x sequence_len tokens
  // (Axolotl's sample_packing), that bin: which samples train together in a
  // step follows from it. 0 when the recipe does not pack that way.
  long long pack_tokens = 0;
  std::string recompute = "none";  // none | selective | full | <framework value>
  std::string precision;     // bf16 | fp16 | fp32 | fp8-hybrid | mxfp8 ...
  // Layout numbers the file leaves to run time (name -> its text). Every
  // number derived from them is unknown too (see derived_unknown()).
  std::map<std::string, std::string> unknown;

  // Whether the global batch (and so the tokens per step) follows from what
  // the file states; false when it is computed from an unknown number.
  bool gbs_known() const;
  bool seq_len_known() const { return !unknown.count("seq_len"); }
  // "tp=$(nproc), pp=$PP": what is unknown, for messages ("" when nothing).
  std::string unknown_text() const;
};

nlohmann::json to_json(const Plan& plan);

}  // namespace attune::recipe
