#!/bin/sh
# pip_list.sh: capdex built-in action maintenance.python.pip_list.
#
# Lists the packages installed for the Python on PATH (pip list), without network.
# Arguments: none. Read only. Prints one JSON object and exits 0, also when Python is absent.
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


# The Python interpreter: python3, else python; a pyenv shim that cannot run counts as absent.
py=''
for c in python3 python; do
	p=$(command -v "$c" 2>/dev/null || true)
	case $p in
	/*) ;;
	*) continue ;;
	esac
	if run_to 10 "$p" -c 'import sys' >/dev/null 2>&1; then
		py=$p
		break
	fi
done

if [ -z "$py" ]; then
	printf '{"installed":false,"python":null,"packages":[],"count":0,"error":null,"summary":"python is not installed"}\n'
	exit 0
fi
out=$(run_to 60 "$py" -m pip list --format=json --disable-pip-version-check 2>/dev/null | head -n 1)
case $out in
\[*\]) err='' ;;
*)
	out='[]'
	err="pip is not available for $py"
	;;
esac
count=$(printf '%s\n' "$out" | awk '{ n += gsub(/"name"/, "") } END { print n + 0 }')
printf '{"installed":true,"python":%s,"packages":%s,"count":%s,"error":%s,"summary":%s}\n' \
	"$(js "$py")" "$out" "$count" "$(jsn "$err")" "$(js "$count packages installed for $py")"
