// For the tests of backends that run processes: whether a pid is a process
// that has not exited. A zombie has exited (a container's init may be slow to
// reap what it inherits), so /proc's state is read rather than trusting kill(0).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <fstream>
#include <iterator>
#include <string>

namespace attune::cluster {

inline bool running(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return true;
  const char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

}  // namespace attune::cluster
