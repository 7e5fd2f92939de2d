#!/bin/sh
# pip_list.sh: capdex built-in action maintenance.python.pip_list.
#
# Lists the packages installed for the Python on PATH (pip list), without network.
# Arguments: none. Read only. Prints one JSON object and exits 0, also when Python is absent.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

find_python

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
