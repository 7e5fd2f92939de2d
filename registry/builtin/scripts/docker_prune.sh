#!/bin/sh
# docker_prune.sh: capdex built-in action maintenance.docker.prune.
#
# Removes stopped containers, unused networks, dangling images and build cache
# (docker system prune), optionally every unused image and volumes. With dry_run (the
# default) nothing is removed: it reports `docker system df` and the command it would run.
# Arguments (JSON on stdin):
#   {"dry_run": bool (default true), "all_images": bool (default false), "volumes": bool (default false)}
# Prints one JSON object and exits 0, also when docker or its daemon is absent.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

ARGS='{}'
if [ ! -t 0 ]; then ARGS=$(cat) || ARGS='{}'; fi
ARGS=$(printf '%s\n' "$ARGS" | tr '\n\r\t' '   ')

# arg_bool NAME DEFAULT: a boolean argument.
arg_bool() {
	if printf '%s\n' "$ARGS" | grep -Eq "\"$1\"[[:space:]]*:[[:space:]]*true"; then
		echo true
	elif printf '%s\n' "$ARGS" | grep -Eq "\"$1\"[[:space:]]*:[[:space:]]*false"; then
		echo false
	else
		echo "$2"
	fi
}
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


# docker_state: sets installed, daemon and server_version; the daemon gets 5 seconds to answer.
installed=false
daemon=false
server_version=''
docker_state() {
	command -v docker >/dev/null 2>&1 || return 0
	installed=true
	server_version=$(run_to 5 docker version --format '{{.Server.Version}}' 2>/dev/null | head -n 1)
	if [ -n "$server_version" ]; then daemon=true; fi
}
docker_state

dry_run=$(arg_bool dry_run true)
all_images=$(arg_bool all_images false)
volumes=$(arg_bool volumes false)
cmd="docker system prune --force"
[ "$all_images" = true ] && cmd="$cmd --all"
[ "$volumes" = true ] && cmd="$cmd --volumes"

# finish PERFORMED ERROR USAGE_LINES OUTPUT_LINES
finish() {
	printf '{"installed":%s,"daemon_running":%s,"dry_run":%s,"performed":%s,"planned_command":%s,"disk_usage":%s,"output_tail":%s,"error":%s}\n' \
		"$installed" "$daemon" "$dry_run" "$1" "$(js "$cmd")" "$(printf '%s' "$3" | jarr)" \
		"$(printf '%s' "$4" | tail -n 20 | jarr)" "$(jsn "$2")"
	exit 0
}
if [ "$installed" = false ]; then finish false "docker is not installed" '' ''; fi
if [ "$daemon" = false ]; then finish false "the docker daemon does not answer" '' ''; fi
usage=$(run_to 30 docker system df 2>/dev/null)
if [ "$dry_run" = true ]; then finish false '' "$usage" ''; fi
set -- system prune --force
[ "$all_images" = true ] && set -- "$@" --all
[ "$volumes" = true ] && set -- "$@" --volumes
if ! out=$(run_to 600 docker "$@" 2>&1); then
	finish false "docker system prune failed" "$usage" "$out"
fi
finish true '' "$usage" "$out"
