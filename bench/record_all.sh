#!/usr/bin/env bash
# Re-run every figure of docs/benchmarks.md, one command at a time (never two benchmarks at once:
# each would slow the other), each recorded with its date, commit and load by docs/record.py, then
# rewrite the page from the records. Run from the repository root with the venv active and the
# shared bench in ../shared/bench; ydata-profiling for filespeed: pip install -e '.[bench]'; a DocumentDB
# server for live_passes: export ARGUS_TEST_MONGODB_URI=$(PYTHON=$PWD/.venv/bin/python bash ../shared/ddb/start.sh
# /tmp/argus-ddb-bench 27081 | tail -1) (also for compat), stopped after with bash ../shared/ddb/stop.sh /tmp/argus-ddb-bench.
#
#   bash bench/record_all.sh                 # every figure, one after the other
#   bash bench/record_all.sh neutral sweep   # only these records (names as below)
#
# A record is written even when its command exits non-zero: the page then shows the exit code.
set -u
declare -a RUNS=(
  "detect|python bench/detect.py"
  "sweep|python bench/sweep.py"
  "sweep-second|python bench/sweep.py --set second"
  "sweep-names|python bench/sweep.py --set names"
  "neutral|python bench/neutral.py --all-kinds"
  "quiet|python bench/quiet.py"
  "stability|python bench/stability.py"
  "passes|python bench/passes.py"
  "live_passes|python bench/live_passes.py"
  "compat|python bench/compat.py --markdown"
  "filespeed|python bench/filespeed.py"
  "parity|python bench/parity.py"
  "contracts|python bench/contracts.py"
  "shapes|python bench/shapes.py"
  "scope|python bench/scope.py --sizes 100000 1000000 --full"
  "segments|python bench/segments.py"
  "prompts|python bench/prompts.py"
  "store|python bench/store.py"
  "incidents|python bench/incidents.py"
  "scheduler_load|python bench/scheduler_load.py --schedules 200 --every 30s --jitter 25s --minutes 4"
  "audit_cpu|python bench/audit_cpu.py"
  "faults|python bench/faults.py"
  "differential|python bench/differential.py --examples 10000"
)
status=0
for entry in "${RUNS[@]}"; do
  name=${entry%%|*}
  command=${entry#*|}
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
    continue
  fi
  echo "== $name: $command" >&2
  # shellcheck disable=SC2086  # the command is split into its words on purpose
  python docs/record.py --as "$name" $command > /dev/null || status=1
done
python docs/generate.py
exit $status
