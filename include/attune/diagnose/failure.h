// Failure: why a run failed, as the diagnoser read it from the log — one of a
// fixed set of kinds, with the evidence line that shows it (root cause first:
// the earliest failing rank; an OOM behind an NCCL abort is an OOM).
#pragma once

#include <optional>
#include <string>

namespace attune::diagnose {

enum class FailureKind {
  Oom,
  NcclTimeout,
  NcclError,
  IllegalMemoryAccess,
  Nan,
  Hang,
  NodeFailure,
  TimeLimit,
  InvalidArgument,
  ImportError,
  PythonError,
  CommandNotFound,  // the shell could not find the launcher or script ("torchrun: not found")
  Unknown,
};

// "oom", "nccl_timeout", "nccl_error", "illegal_memory_access", "nan", "hang",
// "node_failure", "time_limit", "invalid_argument", "import_error", "python_error",
// "command_not_found", "unknown".
std::string to_string(FailureKind k);

struct Failure {
  FailureKind kind = FailureKind::Unknown;
  long line = 0;         // 1-based line of the evidence
  std::string evidence;  // the line itself (normalised), at most a few hundred characters
  int rank = -1;
};

}  // namespace attune::diagnose
