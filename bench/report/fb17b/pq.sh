#!/bin/sh
# pq.sh BIN TAG: per-query rankings for seal_tools and hammerbench_zh, both halves, replay and not
bin=$1; tag=$2; d=/work/wt/fb17b/../shared/eval
for set in seal_tools hammerbench_zh; do for half in 0 1; do for mode in no-replay replay; do
  [ "$tag" != base ] && [ $mode = no-replay ] && continue
  m=""; [ $mode = no-replay ] && m=--no-replay
  nice $bin eval --tools $d/$set/tools.jsonl --queries $d/$set/queries.jsonl --feedback $d/$set/queries.jsonl --split $half $m --no-per-retriever --json --per-query /tmp/fb17b/pq-$tag-$set-$half-$mode.jsonl > /tmp/fb17b/rep-$tag-$set-$half-$mode.json 2>/dev/null
done; done; done
