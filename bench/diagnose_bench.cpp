// Benchmark: diagnosing a large synthetic Megatron-LM log on one core
// (target: >= 400 MB/s on a 1 GB log). Writes the log to a temporary file,
// then times attune's whole diagnosis of it (read, normalise, classify, parse,
// steady state).
// Run: ./build/bench/diagnose_bench [MEGABYTES]   (default 1024)
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "attune/diagnose/diagnosis.h"

namespace {

std::string iteration_line(long it, double ms) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "[rank7]:  [2026-11-30 10:00:00.000000] iteration %8ld/%8d | consumed samples: %12ld | elapsed time "
                "per iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): 412.3 | learning rate: 3.000000E-04 | "
                "global batch size:   128 | lm loss: 2.345678E+00 | loss scale: 1.0 | grad norm: 1.234 | number of "
                "skipped iterations:   0 | number of nan iterations:   0 |\n",
                it, 99999999, it * 128, ms);
  return buf;
}

std::string write_log(double megabytes) {
  std::string path = (std::filesystem::temp_directory_path() / "attune_diagnose_bench.log").string();
  std::ofstream out(path, std::ios::binary);
  const double target = megabytes * 1024 * 1024;
  double written = 0;
  for (long it = 1; written < target; ++it) {
    std::string line = iteration_line(it, 2000.0 + (it % 7));
    out << line;
    written += static_cast<double>(line.size());
    if (it % 50 == 0) {
      std::string mem = "[rank0]: [Rank 0] (after " + std::to_string(it) +
                        " iterations) memory (MB) | allocated: 41234.5 | max allocated: 52345.6 | reserved: 60000.0 "
                        "| max reserved: 61000.0\n";
      out << mem;
      written += static_cast<double>(mem.size());
    }
  }
  return path;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return secs(u.ru_utime) + secs(u.ru_stime);
}

long peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

}  // namespace

int main(int argc, char** argv) {
  double mb = argc > 1 ? std::atof(argv[1]) : 1024.0;
  std::string path = write_log(mb);
  double bytes = static_cast<double>(std::filesystem::file_size(path));
  attune::diagnose::DiagnoseOptions o;
  o.framework = "";  // detected, as users run it
  const double cpu_start = cpu_seconds();
  auto start = std::chrono::steady_clock::now();
  attune::diagnose::Diagnosis d = attune::diagnose::diagnose_logs({path}, o);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = cpu_seconds() - cpu_start;
  // CPU time is what one core spends; wall time also counts waiting for other
  // processes on a shared machine.
  std::printf("%.0f MB log, %d step lines, framework %s: wall %.2f s (%.0f MB/s), cpu %.2f s (%.0f MB/s), peak RSS %ld MiB\n",
              bytes / 1048576, d.steps, d.framework.c_str(), s, bytes / 1048576 / s, cpu, bytes / 1048576 / cpu,
              peak_rss_mib());
  std::filesystem::remove(path);
  return 0;
}
