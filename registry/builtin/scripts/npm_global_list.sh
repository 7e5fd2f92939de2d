#!/bin/sh
# npm_global_list.sh: capdex built-in action maintenance.npm.global_list.
#
# Lists the packages installed globally with npm (name and version), read from the global
# node_modules directory, so it needs no network. Arguments: none. Read only.
# Prints one JSON object and exits 0, also when npm is absent.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

ARGS='{}'
if [ ! -t 0 ]; then ARGS=$(cat) || ARGS='{}'; fi
ARGS=$(printf '%s\n' "$ARGS" | tr '\n\r\t' '   ')

# js VALUE: VALUE as a JSON string (one line, control characters dropped).
js() {
	printf '"%s"' "$(printf '%s' "$1" | tr '\011\012' '  ' | LC_ALL=C tr -d '\000-\010\013-\037' |
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"
}
# jsn VALUE: a JSON string, or null when VALUE is empty.
jsn() {
	if [ -n "$1" ]; then js "$1"; else printf null; fi
}
# run_to SECONDS CMD...: CMD under a time limit when timeout(1) exists.
run_to() {
	t=$1
	shift
	if command -v timeout >/dev/null 2>&1; then timeout "$t" "$@"; else "$@"; fi
}
# pkg_version FILE: the "version" of a package.json.
pkg_version() {
	[ -f "$1" ] || return 0
	sed -n 's/^[[:space:]]*"version"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$1" | head -n 1
}


if ! command -v npm >/dev/null 2>&1; then
	printf '{"installed":false,"npm_version":null,"global_root":null,"packages":[],"count":0,"summary":"npm is not installed"}\n'
	exit 0
fi
npm_version=$(run_to 15 npm --version 2>/dev/null | head -n 1)
root=$(run_to 15 npm root -g 2>/dev/null | head -n 1)
pkgs='['
count=0
if [ -n "$root" ] && [ -d "$root" ]; then
	for d in "$root"/* "$root"/@*/*; do
		[ -f "$d/package.json" ] || continue
		name=${d#"$root"/}
		ver=$(pkg_version "$d/package.json")
		[ "$count" -gt 0 ] && pkgs="$pkgs,"
		pkgs="$pkgs{\"name\":$(js "$name"),\"version\":$(jsn "$ver")}"
		count=$((count + 1))
	done
fi
pkgs="$pkgs]"
printf '{"installed":true,"npm_version":%s,"global_root":%s,"packages":%s,"count":%s,"summary":%s}\n' \
	"$(jsn "$npm_version")" "$(jsn "$root")" "$pkgs" "$count" "$(js "$count global packages in ${root:-?}")"
