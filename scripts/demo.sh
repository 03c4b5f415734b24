#!/bin/bash
# Installs, builds and runs the demo: the levers and plan of an example recipe.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTUNE_WERROR=OFF -DATTUNE_BUILD_TESTS=OFF -DATTUNE_BUILD_BENCH=OFF >/dev/null
cmake --build build -j"$(nproc)" --target attune
./build/attune levers recipes/examples/llama3-8b.attune.yaml
echo
./build/attune recipe set recipes/examples/llama3-8b.attune.yaml tp=1
