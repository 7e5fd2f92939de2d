#!/bin/sh
# npm_prefix_check.sh: capdex built-in action maintenance.npm.prefix_check.
#
# Checks npm's global prefix: where global packages and their executables go, whether that bin
# directory is on PATH and whether the current user may write there (EACCES on npm install -g
# otherwise). Arguments: none. Read only. Prints one JSON object and exits 0.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

if ! command -v npm >/dev/null 2>&1; then
	printf '{"installed":false,"prefix":null,"bin_dir":null,"root":null,"bin_in_path":false,"writable":false,"problems":[],"summary":"npm is not installed"}\n'
	exit 0
fi
prefix=$(run_to 15 npm prefix -g 2>/dev/null | head -n 1)
root=$(run_to 15 npm root -g 2>/dev/null | head -n 1)
bin=''
[ -n "$prefix" ] && bin="$prefix/bin"
in_path=false
if [ -n "$bin" ] && printf '%s\n' "$PATH" | tr ':' '\n' | grep -Fqx "$bin"; then in_path=true; fi
writable=false
if [ -n "$root" ] && [ -d "$root" ] && [ -w "$root" ]; then writable=true; fi
if [ -n "$root" ] && [ ! -d "$root" ] && [ -n "$prefix" ] && [ -w "$prefix" ]; then writable=true; fi
env_prefix=${NPM_CONFIG_PREFIX:-${npm_config_prefix:-}}
problems=''
[ "$in_path" = false ] && problems="${problems}bin_not_in_path
"
[ "$writable" = false ] && problems="${problems}prefix_not_writable
"
if [ -z "$problems" ]; then
	summary="npm global prefix $prefix is writable and $bin is on PATH"
else
	summary="npm global prefix ${prefix:-?}: $(printf '%s' "$problems" | awk 'NF' | tr '\n' ' ' | sed 's/ $//')"
fi
printf '{"installed":true,"prefix":%s,"bin_dir":%s,"root":%s,"prefix_from_env":%s,"bin_in_path":%s,"writable":%s,"problems":%s,"summary":%s}\n' \
	"$(jsn "$prefix")" "$(jsn "$bin")" "$(jsn "$root")" "$(jsn "$env_prefix")" "$in_path" "$writable" \
	"$(printf '%s' "$problems" | jarr)" "$(js "$summary")"
