#include "attune/diagnose/failure.h"

namespace attune::diagnose {

std::string to_string(FailureKind k) {
  switch (k) {
    case FailureKind::Oom: return "oom";
    case FailureKind::NcclTimeout: return "nccl_timeout";
    case FailureKind::NcclError: return "nccl_error";
    case FailureKind::IllegalMemoryAccess: return "illegal_memory_access";
    case FailureKind::Nan: return "nan";
    case FailureKind::Hang: return "hang";
    case FailureKind::NodeFailure: return "node_failure";
    case FailureKind::TimeLimit: return "time_limit";
    case FailureKind::InvalidArgument: return "invalid_argument";
    case FailureKind::ImportError: return "import_error";
    case FailureKind::PythonError: return "python_error";
    case FailureKind::CommandNotFound: return "command_not_found";
    case FailureKind::Unknown: return "unknown";
  }
  return "unknown";
}

}  // namespace attune::diagnose
