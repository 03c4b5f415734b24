#!/bin/bash
# Fuzzes the diagnoser's log path with libFuzzer (tests/fuzz): builds the fuzz
# targets only (Clang, ASan + UBSan, RelWithDebInfo) in build-fuzz/ and runs
# each for FUZZ_SECONDS seconds (default 15) on a temporary copy of its seed
# corpus and saved regressions, so new units never land in the repository.
# Crash, leak, timeout and out-of-memory inputs are kept in
# build-fuzz/fuzz-artifacts/<target>/ and make the script exit 1; the full
# libFuzzer output of each target is in build-fuzz/fuzz-logs/<target>.log.
#
#   FUZZ_SECONDS=60 FUZZ_SEED=0 bash scripts/fuzz.sh   # longer, with a random seed
#   FUZZ_TARGETS="megatron hf" bash scripts/fuzz.sh     # some targets only
#   FUZZ_BUILD_DIR, FUZZ_CXX: build directory and compiler (default build-fuzz, clang++)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-15}"
# A fixed seed makes a CI run repeat the previous one's inputs for the same
# code; FUZZ_SEED=0 lets libFuzzer pick one.
seed="${FUZZ_SEED:-1}"
build="${FUZZ_BUILD_DIR:-build-fuzz}"
jobs="$(nproc)"
script_start=$(date +%s)

first_command() {
  local c
  for c in "$@"; do
    if command -v "$c" >/dev/null 2>&1; then echo "$c"; return 0; fi
  done
  return 1
}

cxx="${FUZZ_CXX:-$(first_command clang++ clang++-14 || true)}"
if [ -z "$cxx" ]; then
  echo "fuzz.sh: no clang++ found (Debian: apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 2
fi
cc="${cxx/clang++/clang}"

work="$(mktemp -d "${TMPDIR:-/tmp}/attune-fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Symbolised stack traces: the sanitizers look for "llvm-symbolizer" in PATH.
if ! command -v llvm-symbolizer >/dev/null 2>&1; then
  if sym="$(first_command llvm-symbolizer-14)"; then
    mkdir -p "$work/bin"
    ln -s "$(command -v "$sym")" "$work/bin/llvm-symbolizer"
    export PATH="$work/bin:$PATH"
  fi
fi

echo "== fuzz build ($build, $cxx)"
CC="$cc" CXX="$cxx" cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTUNE_FUZZ=ON \
  -DATTUNE_BUILD_TESTS=OFF -DATTUNE_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"$jobs" --target attune_fuzz
build_s=$(( $(date +%s) - script_start ))

if [ -n "${FUZZ_TARGETS:-}" ]; then
  read -r -a targets <<<"$FUZZ_TARGETS"
else
  targets=()
  for d in tests/fuzz/corpus/*/; do targets+=("$(basename "$d")"); done
fi

# "key: value" from libFuzzer's output ("?" when absent).
stat() { grep -o "stat::$1: *[0-9]*" "$2" | tail -n 1 | grep -o '[0-9]*$' || echo "?"; }
status_field() {  # field of the last status line ("#123 NEW cov: 1 ft: 2 corp: 3/4Kb ...")
  grep -E "$1" "$2" | tail -n 1 | grep -oE "$3: [^ ]+" | cut -d' ' -f2 || true
}

echo "== fuzzing: ${seconds} s per target, seed ${seed}, -max_len=4096 -timeout=10 -rss_limit_mb=2048"
failed=()
for t in "${targets[@]}"; do
  bin="$build/fuzz/fuzz_$t"
  if [ ! -x "$bin" ]; then
    echo "FAIL $t: no fuzz target $bin (a corpus directory without a target?)"
    failed+=("$t")
    continue
  fi
  corpus="$work/corpus/$t"
  regress="$work/regressions/$t"
  art="$build/fuzz-artifacts/$t"
  log="$build/fuzz-logs/$t.log"
  mkdir -p "$corpus" "$regress" "$art" "$(dirname "$log")"
  rm -f "$art"/*
  cp -R "tests/fuzz/corpus/$t/." "$corpus/"
  if [ -d "tests/fuzz/regressions/$t" ]; then cp -R "tests/fuzz/regressions/$t/." "$regress/"; fi
  seeds=$(find "$corpus" "$regress" -type f ! -name '.*' | wc -l)

  start=$(date +%s)
  rc=0
  TMPDIR="$work" \
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1" \
    "$bin" -max_total_time="$seconds" -seed="$seed" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
      -dict=tests/fuzz/log.dict -print_final_stats=1 -artifact_prefix="$art/" \
      "$corpus" "$regress" >"$log" 2>&1 || rc=$?
  took=$(( $(date +%s) - start ))

  runs=$(stat number_of_executed_units "$log")
  per_s=$(stat average_exec_per_sec "$log")
  new_units=$(stat new_units_added "$log")
  cov0=$(status_field 'INITED' "$log" cov)
  cov=$(status_field ' cov: ' "$log" cov)
  ft=$(status_field ' ft: ' "$log" ft)
  corp=$(status_field ' corp: ' "$log" corp)
  printf '%-10s %4ss  %10s runs (%s/s)  cov %s (seeds: %s)  ft %s  corpus %s (%s seed files)  new units %s\n' \
    "$t" "$took" "$runs" "$per_s" "${cov:-?}" "${cov0:-?}" "${ft:-?}" "${corp:-?}" "$seeds" "$new_units"

  artifact=$(find "$art" -type f | head -n 1)
  if [ "$rc" -ne 0 ] || [ -n "$artifact" ]; then
    failed+=("$t")
    kind="exit status $rc"
    [ -n "$artifact" ] && kind="$(basename "$artifact" | cut -d- -f1)"
    echo "FAIL $t: $kind; artifact: ${artifact:-none}; log: $log"
    # The sanitizer or libFuzzer report, without the fuzzing progress lines.
    grep -vE '^#[0-9]+' "$log" | grep -A 40 -m 1 -E 'ERROR: |runtime error|fuzz invariant|deadly signal|ALARM|out-of-memory' || tail -n 40 "$log"
    if [ -n "$artifact" ]; then
      echo "   reproduce: $bin $artifact"
      known=""
      for f in "tests/fuzz/regressions/$t"/* "tests/fuzz/corpus/$t"/*; do
        if [ -f "$f" ] && cmp -s "$f" "$artifact"; then known="$f"; break; fi
      done
      if [ -n "$known" ]; then
        echo "   this is a saved input that still fails: $known"
      else
        echo "   minimise:  $bin -minimize_crash=1 -max_total_time=60 -exact_artifact_path=$art/minimised $artifact"
        echo "   then save the minimised input as tests/fuzz/regressions/$t/<what-it-is>"
      fi
    fi
  fi
done

echo "== fuzzing took $(( $(date +%s) - script_start )) s (build ${build_s} s)"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found problems in: ${failed[*]}" >&2
  exit 1
fi
