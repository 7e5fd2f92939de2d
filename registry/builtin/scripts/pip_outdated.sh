#!/bin/sh
# pip_outdated.sh: capdex built-in action maintenance.python.pip_outdated.
#
# Lists installed Python packages that have a newer release on the package index. It first
# checks that the index host answers (3 s), so an offline machine gets a quick, honest
# "index_reachable": false instead of a long pip retry loop. Arguments: none. Read only.
# Prints one JSON object and exits 0.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

find_python

if [ -z "$py" ]; then
	printf '{"installed":false,"python":null,"index_url":null,"index_reachable":false,"outdated":[],"count":0,"summary":"python is not installed"}\n'
	exit 0
fi
index=${PIP_INDEX_URL:-}
if [ -z "$index" ]; then
	index=$(run_to 20 "$py" -m pip config get global.index-url 2>/dev/null | head -n 1)
fi
[ -n "$index" ] || index=https://pypi.org/simple
host=$(printf '%s\n' "$index" | sed 's#^[A-Za-z][A-Za-z0-9+.-]*://##; s#^[^/@]*@##; s#[/?].*$##')
port=443
case $index in
http://*) port=80 ;;
esac
case $host in
*:*)
	port=${host##*:}
	host=${host%:*}
	;;
esac
masked=$(printf '%s\n' "$index" | sed 's#^\([A-Za-z][A-Za-z0-9+.-]*://\)[^/@]*@#\1***@#')
reachable=false
if run_to 5 "$py" -c 'import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 3).close()' "$host" "$port" >/dev/null 2>&1; then
	reachable=true
fi
if [ "$reachable" = false ]; then
	printf '{"installed":true,"python":%s,"index_url":%s,"index_reachable":false,"outdated":[],"count":0,"summary":%s}\n' \
		"$(js "$py")" "$(js "$masked")" "$(js "package index $host is not reachable; cannot tell which packages are outdated")"
	exit 0
fi
out=$(run_to 90 "$py" -m pip list --outdated --format=json --disable-pip-version-check 2>/dev/null | head -n 1)
case $out in
\[*\]) ;;
*) out='[]' ;;
esac
count=$(printf '%s\n' "$out" | awk '{ n += gsub(/"name"/, "") } END { print n + 0 }')
printf '{"installed":true,"python":%s,"index_url":%s,"index_reachable":true,"outdated":%s,"count":%s,"summary":%s}\n' \
	"$(js "$py")" "$(js "$masked")" "$out" "$count" "$(js "$count outdated packages for $py")"
