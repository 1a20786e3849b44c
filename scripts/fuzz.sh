#!/usr/bin/env bash
# Runs every fuzz target for a bounded time; fails on the first crash, hang or memory blow-up.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET ...]     (default: 60 s, every target)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`); works on the stable toolchain with
# sanitizers off (`-s none`): libFuzzer's coverage instrumentation needs no nightly flag.
# New interesting inputs accumulate in fuzz/corpus/TARGET (not committed); the seeds in
# fuzz/seeds/TARGET are read, never written. A crashing input lands in fuzz/artifacts/TARGET.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(parsers frame plain_path capture pipeline state filter counters tap hosts fabric)
fi

cargo fuzz build -s none
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target"
    echo "fuzz: $target for ${seconds} s"
    # -rss_limit_mb: a reader that allocates without bound fails here; -timeout: a hang fails
    cargo fuzz run -s none "$target" "corpus/$target" "seeds/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 -max_len=65536 -print_final_stats=1 2>&1 |
        grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb|==|SUMMARY|artifact_prefix)|ERROR|panicked' || true
    # grep hides libFuzzer's progress lines; the exit status is cargo fuzz's
    test "${PIPESTATUS[0]}" -eq 0
done
