#!/bin/bash
# Installs, builds and runs the demo: a tuning campaign (`attune tune`) on the
# simulated cluster, under a benchmark scenario's hidden truth, that finishes
# in seconds and prints the gain and the diff of the tuned recipe (no GPU, no
# LLM key, no cluster needed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTUNE_WERROR=OFF -DATTUNE_BUILD_TESTS=OFF -DATTUNE_BUILD_BENCH=OFF >/dev/null
cmake --build build -j"$(nproc)" --target attune
out="$(mktemp -d)/campaign"
./build/attune tune recipes/scenarios/llama3-8b-h100-script-on-b200 --budget 200gpuh --seed 1 --no-lessons --out "$out"
echo
echo "== the tuned recipe, as a diff of the original"
cat "$out"/best/*.diff
echo
echo "== the tuned recipe scored under the scenario's hidden truth (which the campaign never saw)"
./build/attune sim score recipes/scenarios/llama3-8b-h100-script-on-b200 "$out"/best/*.attune.yaml
