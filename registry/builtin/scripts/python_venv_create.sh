#!/bin/sh
# python_venv_create.sh: capdex built-in action maintenance.python.venv_create.
#
# Creates a Python virtual environment (python -m venv) at the given path. It refuses a path
# that exists and is not empty. Arguments (JSON on stdin):
#   {"path": str (required), "with_pip": bool (default true), "python": interpreter name}
# Prints one JSON object and exits 0; a failure is reported in "error".
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

find_python

path=$(arg_str path '')
with_pip=$(arg_bool with_pip true)
want=$(arg_str python '')

# finish CREATED ERROR
finish() {
	printf '{"installed":%s,"created":%s,"path":%s,"python":%s,"with_pip":%s,"activate":%s,"error":%s}\n' \
		"$installed" "$1" "$(jsn "$path")" "$(jsn "$py")" "$with_pip" "$(jsn "$activate")" "$(jsn "$2")"
	exit 0
}
installed=false
activate=''
if [ -n "$want" ]; then
	case $want in
	python | python3 | python3.[0-9] | python3.[0-9][0-9]) ;;
	*) finish false "python must name an interpreter such as python3.12" ;;
	esac
	p=$(command -v "$want" 2>/dev/null || true)
	case $p in
	/*) py=$p ;;
	*) py='' ;;
	esac
fi
[ -n "$py" ] && installed=true
if [ -z "$path" ]; then
	finish false "path is required"
fi
if [ -z "$py" ]; then
	finish false "python is not installed"
fi
if [ -e "$path" ] && [ -n "$(ls -A "$path" 2>/dev/null)" ]; then
	finish false "$path exists and is not empty"
fi
if [ "$with_pip" = true ]; then
	out=$(run_to 120 "$py" -m venv "$path" 2>&1)
else
	out=$(run_to 120 "$py" -m venv --without-pip "$path" 2>&1)
fi
rc=$?
if [ "$rc" -ne 0 ]; then
	finish false "python -m venv exited with status $rc: $(printf '%s' "$out" | tail -n 2)"
fi
activate="$path/bin/activate"
finish true ''
