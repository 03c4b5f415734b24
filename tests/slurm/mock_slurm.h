// What every test against the mock Slurm needs: whether the cluster is up
// (SLURM_CONF set, naming a file, and sinfo answering) and how a test that
// cannot reach it ends — skipped, or failed when ATTUNE_REQUIRE_SLURM=1 (CI,
// which starts the cluster itself, must not pass by skipping).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "attune/util/subprocess.h"

namespace attune {

// "" when the mock cluster answers; else why not.
inline std::string mock_slurm_unavailable() {
  const char* conf = std::getenv("SLURM_CONF");
  if (conf == nullptr || *conf == '\0') return "SLURM_CONF is not set";
  if (!std::filesystem::exists(conf)) return std::string("SLURM_CONF names a missing file: ") + conf;
  ProcessOptions o;
  o.timeout_s = 15;
  const ProcessResult r = run_process({"sinfo", "-h"}, o);
  if (!r.ok()) return "sinfo failed: " + (r.err.empty() ? r.error : r.err);
  return "";
}

inline bool slurm_required() {
  const char* v = std::getenv("ATTUNE_REQUIRE_SLURM");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace attune

// In a test's SetUp: skips (or fails) the test when the mock cluster is down.
#define ATTUNE_NEED_MOCK_SLURM()                                                                         \
  do {                                                                                                   \
    const std::string why_ = ::attune::mock_slurm_unavailable();                                         \
    if (!why_.empty()) {                                                                                 \
      const std::string msg_ = why_ + ". Start the mock cluster first: eval \"$(bash " ATTUNE_SOURCE_DIR \
                               "/scripts/mock-slurm/start.sh)\" (docs/clusters.md)";                     \
      if (::attune::slurm_required()) GTEST_FAIL() << msg_;                                              \
      GTEST_SKIP() << msg_;                                                                              \
    }                                                                                                    \
  } while (false)
