#!/usr/bin/env bash
# A long fuzzing campaign by hand (the CI smoke run is scripts/fuzz-smoke.sh): WORKERS copies of
# a libFuzzer target in fork mode for SECONDS, sharing CORPUS, crashes kept and counted rather
# than stopping the run. Prints the total number of executions and the findings (reproducers
# under OUT/artifacts; replay one with `FUZZER FILE`, add it to fuzz/regressions/<target>/).
#
#   fuzz/campaign.sh FUZZER SECONDS WORKERS CORPUS OUT
#
# For throughput, build the fuzzer without sanitizers (-DSINTER_FUZZ_SANITIZERS=OFF); with
# SINTER_STATIC_TOOLS=ON (the default) it is a portable binary that runs on any x86-64 Linux.
set -euo pipefail
[ $# -eq 5 ] || { sed -n 2,9p "$0" >&2; exit 2; }
fuzzer=$1 seconds=$2 workers=$3 corpus=$4 out=$5
mkdir -p "$corpus" "$out/artifacts"
chmod +x "$fuzzer" 2>/dev/null || true
"$fuzzer" -fork="$workers" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
  -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
  -artifact_prefix="$out/artifacts/" "$corpus" >"$out/campaign.log" 2>&1 || true
last=$(grep -E '^#[0-9]+: cov:' "$out/campaign.log" | tail -1)
echo "campaign: $fuzzer, $workers workers, ${seconds}s"
echo "campaign: last status: $last"
echo "campaign: executions: $(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")"
findings=$(find "$out/artifacts" -type f | wc -l)
echo "campaign: findings: $findings"
find "$out/artifacts" -type f | head -20 | sed 's/^/campaign:   /'
