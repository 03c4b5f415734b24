// Must NOT compile: code outside the gate tries to make an ApprovedRecipe (the
// only thing a cluster launches) without the gate's verdict. Built by
// tests/CMakeLists.txt with try_compile and as a CTest case that must fail.
// With -DATTUNE_CONTROL it uses only the public API and must compile, which
// proves the failure comes from the private constructor and not the setup.
#include "attune/gate/approved_recipe.h"

const attune::gate::ApprovedRecipe* forge(const attune::recipe::Recipe& r) {
#ifdef ATTUNE_CONTROL
  (void)r;
  return nullptr;
#else
  static attune::gate::ApprovedRecipe forged(r, attune::gate::Verdict{});
  return &forged;
#endif
}
