// The approved recipe the cluster tests launch: a small Megatron-LM Llama 3 8B
// launch script, approved by the gate against itself (only the gate can make
// an ApprovedRecipe).
#pragma once

#include <string>

#include "../fixtures/llama3_8b_script.h"
#include "attune/gate/correctness_gate.h"

namespace attune::cluster {

inline gate::ApprovedRecipe approved_llama3_8b(int gpus, int tp) {
  const std::string script = test::llama3_8b_script(gpus, tp);
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
