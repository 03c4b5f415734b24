#!/bin/bash
# Installs the Debian 12 packages attune needs to build and test. Run as root.
set -euo pipefail
PACKAGES=(
  cmake g++ make pkg-config
  libyaml-cpp-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
  libspdlog-dev libfmt-dev libcurl4-openssl-dev libssl-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcpp-httplib-dev
  python3 python3-optuna python3-xgboost  # the optuna and xgb baselines (tools/tuner_bridge.py)
  chromium  # the report test renders report.html headless
  clang-14 libclang-rt-14-dev llvm-14  # scripts/fuzz.sh: libFuzzer, llvm-symbolizer
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
