#!/bin/bash
# Installs, builds and runs every test: the regular build (warnings as errors),
# an ASan+UBSan build, and a short libFuzzer run of the log parsers
# (scripts/fuzz.sh, FUZZ_SECONDS per target, default 15). ATTUNE_CORPUS points
# the corpus test at the real recipe files (default: ../shared/data beside the
# repository, when present). As root it starts the mock Slurm for the tests
# labelled slurm (and stops it at the end, unless it was already running);
# otherwise those tests skip unless SLURM_CONF names a running cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if [ -z "${ATTUNE_CORPUS:-}" ] && [ -d ../shared/data ]; then
  ATTUNE_CORPUS="$(cd ../shared/data && pwd)"
fi
export ATTUNE_CORPUS="${ATTUNE_CORPUS:-}"
jobs="$(nproc)"
# Tests in flight: twice the cores. The Slurm and campaign tests spend most of
# their time waiting on jobs and emulated steps (the sanitizer run used one
# core of two at -j2), so the waits overlap instead of holding a core each.
test_jobs=$((2 * jobs))
# Each phase says how long it took: CI has to finish well inside an hour on
# two cores, and this is where the time goes.
phase_start=$(date +%s)
phase() {
  local now
  now=$(date +%s)
  echo "== $1 (previous phase: $((now - phase_start)) s)"
  phase_start=$now
}

phase "mock Slurm (tests labelled slurm)"
if [ "$(id -u)" = 0 ]; then
  mock_dir="${ATTUNE_MOCK_SLURM_DIR:-/tmp/attune-mock-slurm}"
  already_up=0
  if [ -f "$mock_dir/env.sh" ] && (. "$mock_dir/env.sh" && timeout 10 sinfo -h >/dev/null 2>&1); then already_up=1; fi
  eval "$(bash scripts/mock-slurm/start.sh)"
  if [ "$already_up" = 0 ]; then trap 'bash scripts/mock-slurm/stop.sh >&2' EXIT; fi
  export ATTUNE_REQUIRE_SLURM=1
else
  echo "not root: the mock Slurm cannot be started here; tests labelled slurm skip unless SLURM_CONF names a running one"
fi

phase "build (RelWithDebInfo without debug information, -Werror)"
# The tests need no debug information from the optimised build (the sanitizer
# build has it for its reports), and without it the build takes a third less.
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTUNE_WERROR=ON \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG" >/dev/null
cmake --build build -j"$jobs"
phase "tests"
ctest --test-dir build --output-on-failure -j"$test_jobs"

phase "build (ASan + UBSan)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DATTUNE_SANITIZE=ON -DATTUNE_WERROR=ON -DATTUNE_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs"
phase "tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure -j"$test_jobs"

phase "fuzzing (libFuzzer, ${FUZZ_SECONDS:-15} s per target)"
bash scripts/fuzz.sh
phase "done"
