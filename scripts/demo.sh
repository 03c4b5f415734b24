#!/bin/bash
# Installs, builds and runs the demo: the levers and plan of an example recipe, one
# edit, one run of a benchmark scenario on the simulated cluster with its
# diagnosis, and the scenario's optimum on the simulator (no GPU needed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTUNE_WERROR=OFF -DATTUNE_BUILD_TESTS=OFF -DATTUNE_BUILD_BENCH=OFF >/dev/null
cmake --build build -j"$(nproc)" --target attune
./build/attune levers recipes/examples/llama3-8b.attune.yaml
echo
./build/attune recipe set recipes/examples/llama3-8b.attune.yaml tp=1
echo
run_dir="$(mktemp -d)"
./build/attune run recipes/scenarios/llama3-8b-h100-script-on-b200/scenario.yaml --cluster sim --run-dir "$run_dir"
echo
./build/attune sim optimum recipes/scenarios/llama3-8b-h100-script-on-b200/scenario.yaml
