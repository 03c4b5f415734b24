// Must NOT compile: code other than prepare_launch tries to make a Launch (the
// only thing Cluster::submit takes) from an approved recipe and a RunSpec of
// its own, so that the command, environment or files would not be the ones
// prepared from what the gate approved. Built by tests/CMakeLists.txt with
// try_compile and as a CTest case that must fail. With -DATTUNE_CONTROL it
// uses only the public API (prepare_launch) and must compile, which proves
// the failure comes from the private constructor and not the setup.
#include "attune/cluster/launch.h"

attune::cluster::Launch forge(const attune::gate::ApprovedRecipe& approved,
                              const attune::cluster::ClusterDefinition& cluster) {
#ifdef ATTUNE_CONTROL
  return attune::cluster::prepare_launch(approved, cluster, attune::cluster::LaunchRequest{});
#else
  attune::cluster::RunSpec made_up;
  made_up.command = {"/bin/sh", "-c", "anything at all"};
  return attune::cluster::Launch(approved, made_up, cluster.name, cluster.backend);
#endif
}
