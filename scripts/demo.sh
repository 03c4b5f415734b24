#!/bin/bash
# Installs, builds and runs the demo: the levers and plan of an example recipe, one
# edit, and the optimum of a benchmark scenario on the simulator (no GPU needed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTUNE_WERROR=OFF -DATTUNE_BUILD_TESTS=OFF -DATTUNE_BUILD_BENCH=OFF >/dev/null
cmake --build build -j"$(nproc)" --target attune
./build/attune levers recipes/examples/llama3-8b.attune.yaml
echo
./build/attune recipe set recipes/examples/llama3-8b.attune.yaml tp=1
echo
./build/attune sim optimum recipes/scenarios/llama3-8b-h100-script-on-b200/scenario.yaml
