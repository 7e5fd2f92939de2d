#!/bin/sh
# codex_install.sh MODE: capdex built-in actions maintenance.codex.update (MODE update) and
# maintenance.codex.rollback (MODE rollback).
#
# Installs @openai/codex globally with npm: the requested version (update: default "latest";
# rollback: a version is required). Arguments (JSON on stdin):
#   {"version": str, "dry_run": bool (default true)}
# With dry_run (the default) nothing is changed: the command that would run is reported.
# Prints one JSON object and exits 0; a failed npm install is reported, not raised.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

mode=${1:-update}
case $mode in
update | rollback) ;;
*) mode=update ;;
esac
dry_run=$(arg_bool dry_run true)
if [ "$mode" = update ]; then
	version=$(arg_str version latest)
else
	version=$(arg_str version '')
fi

active=$(command -v codex 2>/dev/null || true)
case $active in
/*) ;;
*) active='' ;;
esac
before=''
[ -n "$active" ] && before=$(version_of "$active")

# finish PERFORMED OK ERROR AFTER OUTPUT_LINES
finish() {
	printf '{"mode":%s,"dry_run":%s,"performed":%s,"ok":%s,"npm_available":%s,"requested_version":%s,"planned_command":%s,"active_binary":%s,"version_before":%s,"version_after":%s,"error":%s,"output_tail":%s}\n' \
		"$(js "$mode")" "$dry_run" "$1" "$2" "$npm_available" "$(jsn "$version")" "$(jsn "$cmd")" \
		"$(jsn "$active")" "$(jsn "$before")" "$(jsn "$4")" "$(jsn "$3")" "$(printf '%s' "$5" | tail -n 20 | jarr)"
	exit 0
}

npm_available=false
command -v npm >/dev/null 2>&1 && npm_available=true
cmd=''
if [ -z "$version" ]; then
	finish false false "version is required for a rollback (for example \"0.40.0\")" '' ''
fi
case $version in
*[!0-9A-Za-z.+-]*)
	version_bad=$version
	version=''
	finish false false "invalid version: $version_bad" '' ''
	;;
esac
cmd="npm install -g @openai/codex@$version"
if [ "$npm_available" = false ]; then
	finish false false "npm is not installed; codex is installed with npm" '' ''
fi
if [ "$dry_run" = true ]; then
	finish false true '' '' ''
fi

out=$(run_to 300 npm install -g "@openai/codex@$version" 2>&1)
rc=$?
active=$(command -v codex 2>/dev/null || true)
after=''
[ -n "$active" ] && after=$(version_of "$active")
if [ "$rc" -ne 0 ]; then
	finish true false "npm install exited with status $rc" "$after" "$out"
fi
finish true true '' "$after" "$out"
