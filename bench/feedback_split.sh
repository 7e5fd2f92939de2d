#!/bin/sh
# feedback_split.sh: issue 17's warm/cold measure of learning from use, reproducibly.
#
# For each set of ../shared/eval (or $CAPDEX_EVAL_DIR) and each half H (0 and 1, by the low bit
# of FNV-1a 64 of the qid: bench.Half), score the queries of half H twice: once after
# replaying the queries of the other half as successful sessions (search → describe → success,
# the daemon's recording path), once without (--no-replay). The scored queries are classed
# warm (every labelled capability was led to by a replayed session), cold (none was) and
# mixed. Run from the repository root:
#
#	sh bench/feedback_split.sh            # prints one line per set, half and run
#
# The same figures, with the targets asserted: go test ./bench -run TestFeedbackWarmCold -v
set -eu
dir=${CAPDEX_EVAL_DIR:-../shared/eval}
bin=$(mktemp -d)/capdex
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/capdex
for set in metatool seal_tools hammerbench_zh; do
	for half in 0 1; do
		for mode in --no-replay ""; do
			"$bin" eval --tools "$dir/$set/tools.jsonl" --queries "$dir/$set/queries.jsonl" \
				--feedback "$dir/$set/queries.jsonl" --split "$half" $mode --no-per-retriever --json 2>/dev/null |
				SET=$set HALF=$half MODE=${mode:-replay} python3 -c '
import json, os, sys
r = json.load(sys.stdin); f = r["feedback"]
def c(x): return "-" if x is None else "%d %.3f" % (x["cases"], x["recall@5"])
print(os.environ["SET"], "half", os.environ["HALF"], os.environ["MODE"].lstrip("-"), "replayed", f["replayed"],
      "| warm", c(f["warm"]), "| cold", c(f["cold"]), "| mixed", c(f["mixed"]), "| all %.3f" % r["recall@5"], "| p50 %d us" % r["latency_p50_us"])'
		done
	done
done
