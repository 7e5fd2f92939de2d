#!/bin/sh
# python_version_check.sh: capdex built-in action maintenance.python.version_check.
#
# Reports the Python interpreter on PATH, its version, pip's version, the active virtual
# environment, pyenv, and every python3 executable on PATH. Arguments: none. Read only.
# Prints one JSON object and exits 0, also when Python is absent.
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
# jarr: the non-empty lines of stdin as a JSON array of strings.
jarr() {
	tr '\011' ' ' | LC_ALL=C tr -d '\000-\010\013-\037' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' |
		awk 'BEGIN { printf "[" } NF { if (n++) printf ","; printf "\"%s\"", $0 } END { printf "]" }'
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

all=''
set -f
old_ifs=$IFS
IFS=:
for d in $PATH; do
	[ -n "$d" ] || d=.
	if [ -f "$d/python3" ] && [ -x "$d/python3" ]; then
		all="$all$d/python3
"
	fi
done
IFS=$old_ifs
set +f
pyenv=false
command -v pyenv >/dev/null 2>&1 && pyenv=true
if [ -z "$py" ]; then
	printf '{"installed":false,"python":null,"version":null,"pip_version":null,"virtual_env":%s,"pyenv":%s,"executables":%s,"summary":"python is not installed"}\n' \
		"$(jsn "${VIRTUAL_ENV:-}")" "$pyenv" "$(printf '%s' "$all" | awk 'NF && !seen[$0]++' | jarr)"
	exit 0
fi
version=$(run_to 10 "$py" -c 'import platform; print(platform.python_version())' 2>/dev/null | head -n 1)
pip_version=$(run_to 20 "$py" -m pip --version 2>/dev/null | head -n 1 | awk '{ print $2 }')
printf '{"installed":true,"python":%s,"version":%s,"pip_version":%s,"virtual_env":%s,"pyenv":%s,"executables":%s,"summary":%s}\n' \
	"$(js "$py")" "$(jsn "$version")" "$(jsn "$pip_version")" "$(jsn "${VIRTUAL_ENV:-}")" "$pyenv" \
	"$(printf '%s' "$all" | awk 'NF && !seen[$0]++' | jarr)" "$(js "Python ${version:-?} at $py, pip ${pip_version:-absent}")"
