#!/bin/sh
# codex_status.sh: capdex built-in action maintenance.codex.status.
#
# Reports whether codex is on PATH, where, which version it reports and how it was installed.
# Arguments: none. Read only. Prints one JSON object and exits 0, also when codex is absent.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

active=$(command -v codex 2>/dev/null || true)
case $active in
/*) ;;
*) active='' ;;
esac
installed=false
real=''
version=''
method=unknown
npm_version=''
if [ -n "$active" ]; then
	installed=true
	real=$(realpath_of "$active")
	version=$(version_of "$active")
	method=other
	case $real in
	*/node_modules/@openai/codex/*) method=npm ;;
	*/Cellar/* | */homebrew/* | */linuxbrew/*) method=homebrew ;;
	esac
fi
if command -v npm >/dev/null 2>&1; then
	root=$(run_to 15 npm root -g 2>/dev/null | head -n 1)
	if [ -n "$root" ]; then npm_version=$(pkg_version "$root/@openai/codex/package.json"); fi
fi
if [ "$installed" = true ]; then
	summary="codex ${version:-(unknown version)} at $active, installed by $method"
else
	summary="codex is not installed on PATH"
fi
printf '{"installed":%s,"active_binary":%s,"real_path":%s,"active_version":%s,"install_method":%s,"installed_npm_version":%s,"summary":%s}\n' \
	"$installed" "$(jsn "$active")" "$(jsn "$real")" "$(jsn "$version")" "$(js "$method")" "$(jsn "$npm_version")" "$(js "$summary")"
