#!/bin/sh
# docker_ps.sh: capdex built-in action maintenance.docker.ps.
#
# Lists containers (running ones, or all with "all": true) as docker reports them.
# Arguments (JSON on stdin): {"all": bool (default false)}. Read only.
# Prints one JSON object and exits 0, also when docker or its daemon is absent.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

docker_state

all=$(arg_bool all false)
if [ "$daemon" = false ]; then
	printf '{"installed":%s,"daemon_running":false,"all":%s,"containers":[],"count":0,"summary":%s}\n' \
		"$installed" "$all" "$(js "$([ "$installed" = true ] && echo 'the docker daemon does not answer' || echo 'docker is not installed')")"
	exit 0
fi
if [ "$all" = true ]; then
	lines=$(run_to 15 docker ps --all --no-trunc --format '{{json .}}' 2>/dev/null)
else
	lines=$(run_to 15 docker ps --no-trunc --format '{{json .}}' 2>/dev/null)
fi
# Each line is one JSON object; keep only lines that look like one.
containers=$(printf '%s\n' "$lines" | awk '/^\{.*\}$/ { if (n++) printf ","; printf "%s", $0 } END { print "" }')
count=$(printf '%s\n' "$lines" | awk '/^\{.*\}$/ { n++ } END { print n + 0 }')
printf '{"installed":true,"daemon_running":true,"all":%s,"containers":[%s],"count":%s,"summary":%s}\n' \
	"$all" "$containers" "$count" "$(js "$count containers")"
