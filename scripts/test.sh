#!/bin/bash
# Installs, builds and runs every test: the regular build (warnings as errors),
# an ASan+UBSan build, and a short libFuzzer run of the log parsers
# (scripts/fuzz.sh, FUZZ_SECONDS per target, default 15). ATTUNE_CORPUS points
# the corpus test at the real recipe files (default: ../shared/data beside the
# repository, when present).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if [ -z "${ATTUNE_CORPUS:-}" ] && [ -d ../shared/data ]; then
  ATTUNE_CORPUS="$(cd ../shared/data && pwd)"
fi
export ATTUNE_CORPUS="${ATTUNE_CORPUS:-}"
jobs="$(nproc)"

echo "== build (RelWithDebInfo, -Werror)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTUNE_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
echo "== tests"
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== build (ASan + UBSan)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DATTUNE_SANITIZE=ON -DATTUNE_WERROR=ON -DATTUNE_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs"
echo "== tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure -j"$jobs"

echo "== fuzzing (libFuzzer, ${FUZZ_SECONDS:-15} s per target)"
bash scripts/fuzz.sh
