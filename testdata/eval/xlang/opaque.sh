#!/bin/sh
# opaque.sh EVAL_DIR OUT_DIR: writes OUT_DIR/hb_opaque_tools.jsonl (the hammerbench_zh
# catalogue with every id and name replaced by "hb-N", N its line number, so only the
# Chinese description and parameters can match) and OUT_DIR/en_on_hammerbench_opaque.jsonl
# (en_on_hammerbench.jsonl with its labels mapped the same way). Needs jq.
set -eu
eval_dir=$1 out=$2
here=$(dirname "$0")
mkdir -p "$out"
jq -c --slurp 'to_entries[] | .value + {id: ("hb-\(.key+1)"), name: ("hb-\(.key+1)")} | del(.source)' \
	"$eval_dir/hammerbench_zh/tools.jsonl" >"$out/hb_opaque_tools.jsonl"
jq -c --slurpfile tools "$eval_dir/hammerbench_zh/tools.jsonl" \
	'($tools | to_entries | map({key: .value.id, value: "hb-\(.key+1)"}) | from_entries) as $m
	 | .relevant |= map($m[.])' "$here/en_on_hammerbench.jsonl" >"$out/en_on_hammerbench_opaque.jsonl"
