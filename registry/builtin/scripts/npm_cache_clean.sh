#!/bin/sh
# npm_cache_clean.sh: capdex built-in action maintenance.npm.cache_clean.
#
# Reports the npm cache directory and its size; with dry_run false it also runs
# `npm cache clean --force` and reports the size after. Arguments (JSON on stdin):
#   {"dry_run": bool (default true)}
# Prints one JSON object and exits 0, also when npm is absent.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

dry_run=$(arg_bool dry_run true)
# size_kb DIR: disk use of DIR in KiB (0 when absent).
size_kb() {
	if [ -d "$1" ]; then du -sk "$1" 2>/dev/null | awk '{ print $1; exit }'; else echo 0; fi
}
if ! command -v npm >/dev/null 2>&1; then
	printf '{"installed":false,"dry_run":%s,"performed":false,"cache_dir":null,"size_kb_before":0,"size_kb_after":null,"error":null,"summary":"npm is not installed"}\n' "$dry_run"
	exit 0
fi
cache=$(run_to 15 npm config get cache 2>/dev/null | head -n 1)
before=$(size_kb "$cache")
[ -n "$before" ] || before=0
if [ "$dry_run" = true ]; then
	printf '{"installed":true,"dry_run":true,"performed":false,"cache_dir":%s,"size_kb_before":%s,"size_kb_after":null,"planned_command":"npm cache clean --force","error":null,"summary":%s}\n' \
		"$(jsn "$cache")" "$before" "$(js "npm cache ${cache:-?} holds ${before} KiB; dry run, nothing removed")"
	exit 0
fi
err=''
if ! out=$(run_to 120 npm cache clean --force 2>&1); then
	err="npm cache clean failed: $(printf '%s' "$out" | tail -n 3)"
fi
after=$(size_kb "$cache")
[ -n "$after" ] || after=0
ok=true
[ -n "$err" ] && ok=false
printf '{"installed":true,"dry_run":false,"performed":%s,"cache_dir":%s,"size_kb_before":%s,"size_kb_after":%s,"error":%s,"summary":%s}\n' \
	"$ok" "$(jsn "$cache")" "$before" "$after" "$(jsn "$err")" "$(js "npm cache ${cache:-?}: ${before} KiB before, ${after} KiB after")"
