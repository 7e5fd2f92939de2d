#!/bin/sh
# codex_path_repair.sh: capdex built-in action maintenance.codex.path_repair.
#
# Puts the npm global bin directory (or the given bin_dir) ahead of other codex executables on
# PATH. It never edits a shell start-up file: it reports the line it would add, and with
# dry_run false it writes that line into a snippet file under $CAPDEX_RUN_DIR (else $TMPDIR,
# else /tmp) for the user to source or append. Arguments (JSON on stdin):
#   {"dry_run": bool (default true), "shell": "auto"|"bash"|"zsh"|"fish"|"sh",
#    "bin_dir": absolute directory (default: npm global bin)}
# Prints one JSON object and exits 0.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

dry_run=$(arg_bool dry_run true)
shell=$(arg_str shell auto)
bin_dir=$(arg_str bin_dir '')

# finish OK ERROR: print the report and stop.
finish() {
	printf '{"dry_run":%s,"ok":%s,"needed":%s,"shell":%s,"bin_dir":%s,"rc_file":%s,"snippet":%s,"shadowing":%s,"planned_changes":%s,"snippet_file":%s,"modified_files":[],"error":%s,"notes":%s}\n' \
		"$dry_run" "$1" "$needed" "$(js "$shell")" "$(jsn "$bin_dir")" "$(jsn "$rc_file")" "$(jsn "$snippet")" \
		"$(printf '%s' "$shadowing" | jarr)" "$planned" "$(jsn "$snippet_file")" "$(jsn "$2")" "$(printf '%s' "$notes" | jarr)"
	exit 0
}
needed=false
rc_file=''
snippet=''
shadowing=''
planned='[]'
snippet_file=''
notes=''

if [ "$shell" = auto ]; then
	shell=$(basename "${SHELL:-sh}")
fi
case $shell in
bash) rc_file="${HOME:-~}/.bashrc" ;;
zsh) rc_file="${HOME:-~}/.zshrc" ;;
fish) rc_file="${HOME:-~}/.config/fish/config.fish" ;;
*)
	shell="sh"
	rc_file="${HOME:-~}/.profile"
	;;
esac

if [ -z "$bin_dir" ]; then
	if command -v npm >/dev/null 2>&1; then
		prefix=$(run_to 15 npm prefix -g 2>/dev/null | head -n 1)
		[ -n "$prefix" ] && bin_dir="$prefix/bin"
	fi
	if [ -z "$bin_dir" ]; then
		finish false "npm is not installed and no bin_dir was given"
	fi
fi
case $bin_dir in
/*) ;;
*) finish false "bin_dir must be an absolute directory" ;;
esac
case $bin_dir in
*[!A-Za-z0-9_./@+-]*) finish false "bin_dir holds characters this repair does not quote" ;;
esac
if [ ! -x "$bin_dir/codex" ]; then
	finish false "no codex executable in $bin_dir; install it first (maintenance.codex.update)"
fi

# The codex executables PATH finds before bin_dir.
set -f
old_ifs=$IFS
IFS=:
for d in $PATH; do
	[ -n "$d" ] || d=.
	[ "$d" = "$bin_dir" ] && break
	if [ -f "$d/codex" ] && [ -x "$d/codex" ]; then
		shadowing="$shadowing$d/codex
"
	fi
done
IFS=$old_ifs
set +f

if [ -z "$shadowing" ] && printf '%s\n' "$PATH" | tr ':' '\n' | grep -Fqx "$bin_dir"; then
	notes="$bin_dir already comes first for codex; nothing to change
"
	finish true ''
fi
needed=true
if [ "$shell" = fish ]; then
	snippet="fish_add_path --move --path $bin_dir"
else
	snippet="export PATH=\"$bin_dir:\$PATH\""
fi
planned="[{\"file\":$(js "$rc_file"),\"change\":\"append\",\"line\":$(js "$snippet")}]"
notes="after sourcing, run 'hash -r' (bash, sh) or 'rehash' (zsh) in shells that are already open
the start-up file itself is never edited by this action
"
if [ "$dry_run" = true ]; then
	finish true ''
fi

dir=${CAPDEX_RUN_DIR:-${TMPDIR:-/tmp}}
if ! mkdir -p "$dir" 2>/dev/null; then
	finish false "cannot create $dir"
fi
ext="sh"
[ "$shell" = fish ] && ext=fish
snippet_file="$dir/codex-path-repair.$ext"
if ! printf '# capdex maintenance.codex.path_repair: put %s first on PATH.\n# Source this file, or append it to %s.\n%s\n' \
	"$bin_dir" "$rc_file" "$snippet" >"$snippet_file" 2>/dev/null; then
	f=$snippet_file
	snippet_file=''
	finish false "cannot write $f"
fi
notes="${notes}wrote $snippet_file; source it or append it to $rc_file
"
finish true ''
