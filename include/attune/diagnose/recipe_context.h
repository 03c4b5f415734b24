// What a recipe tells the diagnoser that a log may not say: the model (for
// FLOPs), GPU, precision, world size, sequence length and global batch.
#pragma once

#include "attune/diagnose/diagnosis.h"
#include "attune/recipe/recipe.h"

namespace attune::diagnose {

DiagnoseOptions options_for_recipe(const recipe::Recipe& r);

}  // namespace attune::diagnose
