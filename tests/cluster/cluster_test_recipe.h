// The approved recipe the cluster tests launch: a small Megatron-LM Llama 3 8B
// launch script, approved by the gate against itself (only the gate can make
// an ApprovedRecipe).
#pragma once

#include <string>

#include "attune/gate/correctness_gate.h"

namespace attune::cluster {

inline gate::ApprovedRecipe approved_llama3_8b(int gpus, int tp) {
  const std::string script = R"(#!/bin/bash
ARGS=(
    --num-layers 32
    --hidden-size 4096
    --ffn-hidden-size 14336
    --num-attention-heads 32
    --group-query-attention
    --num-query-groups 8
    --seq-length 8192
    --max-position-embeddings 8192
    --swiglu
    --micro-batch-size 1
    --global-batch-size 64
    --train-iters 1000
    --lr 3e-4
    --bf16
    --use-distributed-optimizer
    --tensor-model-parallel-size )" + std::to_string(tp) + (tp > 1 ? "\n    --sequence-parallel" : "") + R"(
)
torchrun --nproc_per_node )" + std::to_string(gpus) + R"( pretrain_gpt.py "${ARGS[@]}"
)";
  recipe::RecipeOptions o;
  o.framework = "megatron";
  o.model = "llama3-8b";
  o.hardware.gpu = "h100";
  o.hardware.nodes = 1;
  o.hardware.gpus_per_node = gpus;
  const recipe::Recipe r = recipe::Recipe::from_text("pretrain.sh", script, o);
  return gate::CorrectnessGate{}.approve(r, r);
}

}  // namespace attune::cluster
