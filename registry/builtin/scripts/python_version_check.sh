#!/bin/sh
# python_version_check.sh: capdex built-in action maintenance.python.version_check.
#
# Reports the Python interpreter on PATH, its version, pip's version, the active virtual
# environment, pyenv, and every python3 executable on PATH. Arguments: none. Read only.
# Prints one JSON object and exits 0, also when Python is absent.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

find_python

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
