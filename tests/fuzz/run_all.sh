#!/usr/bin/env bash
# Builds the libFuzzer targets (CMake preset `fuzz`) and fuzzes each for SECONDS (default 60),
# one after the other, from the seed corpora. Fails (exit 1) when any target reports a finding:
# a crash, a sanitizer report, a broken property, a leak, a timeout (> 10 s for one input) or
# running out of memory (> 2 GiB). Findings are written to build/fuzz/findings/TARGET/.
#
#   tests/fuzz/run_all.sh [SECONDS [TARGET...]]
#
# The corpus grown by a run is kept in build/fuzz/corpus/TARGET/ and reused by the next run.
# How to reproduce a finding and what each target checks: tests/fuzz/README.md.
set -uo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
shift || true

cmake --preset fuzz >/dev/null && cmake --build --preset fuzz || exit 1

build=build/fuzz
all=(snapshot_json policy_json decisions_json openb_reader philly_reader trace_reader schedule
     snapshot_mutator)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

# Seeds of each target: its own folder under tests/fuzz/corpus plus files of the project.
seeds() {
  local c=tests/fuzz/corpus
  case "$1" in
    snapshot_json) echo "$c/snapshot_json examples/snapshots examples/scenarios tests/cli/data" ;;
    policy_json) echo "$c/policy_json examples/policies examples/scenarios" ;;
    decisions_json) echo "$c/decisions_json tests/golden" ;;
    schedule | snapshot_mutator) echo "$c/schedule examples/snapshots examples/scenarios" ;;
    *) echo "$c/$1" ;;
  esac
}
options() {
  case "$1" in
    snapshot_json | policy_json | decisions_json | schedule)
      echo "-dict=tests/fuzz/json.dict -max_len=16384" ;;
    snapshot_mutator) echo "-max_len=65536" ;;
    *) echo "-max_len=4096" ;;
  esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
passed=0
failed=0
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  findings="$build/findings/$t/"
  mkdir -p "$corpus" "$findings"
  log="$build/findings/$t.log"
  existing=()
  for d in $(seeds "$t"); do [ -d "$d" ] && existing+=("$d"); done
  echo "== $t: ${seconds}s"
  # shellcheck disable=SC2046
  "$build/tests/fuzz/${t}_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$findings" $(options "$t") \
    "$corpus" "${existing[@]}" >"$log" 2>&1
  rc=$?
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+ *DONE' "$log" | sed 's/^/   /'
  echo "   corpus: $(find "$corpus" -type f | wc -l) inputs"
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "   FINDING (exit $rc), log: $log; input: $(ls "$findings" | head -3)"
    grep -E 'ERROR|runtime error|fuzz property failed|internal check failed|SUMMARY' "$log" |
      head -5 | sed 's/^/   /'
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
