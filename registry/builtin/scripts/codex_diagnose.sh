#!/bin/sh
# codex_diagnose.sh: capdex built-in action maintenance.codex.diagnose.
#
# Finds every codex executable on PATH (like `type -a codex`), the version each one reports,
# the npm global prefix and the version npm installed, and names the conflicts between them.
# Arguments (JSON on stdin): {"include_shell_resolution": bool (default true)}.
# Read only: changes nothing. Prints one JSON object and exits 0, also when codex or npm is
# absent.
set -u
PATH=${PATH:-/usr/local/bin:/usr/bin:/bin}
export PATH

. "$(dirname "$0")/lib.sh"
read_args

include_shell=$(arg_bool include_shell_resolution true)

# Every codex on PATH, in PATH order, without repeats.
found=''
set -f
old_ifs=$IFS
IFS=:
for d in $PATH; do
	[ -n "$d" ] || d=.
	if [ -f "$d/codex" ] && [ -x "$d/codex" ]; then
		found="$found$d/codex
"
	fi
done
IFS=$old_ifs
set +f
found=$(printf '%s' "$found" | awk 'NF && !seen[$0]++')

active=$(printf '%s\n' "$found" | sed -n '1p')
installed=false
[ -n "$active" ] && installed=true
active_real=''
active_version=''
if [ -n "$active" ]; then
	active_real=$(realpath_of "$active")
	active_version=$(version_of "$active")
fi

# npm's view.
npm_available=false
npm_prefix=''
npm_root=''
npm_bin=''
npm_version=''
npm_bin_index=-1
if command -v npm >/dev/null 2>&1; then
	npm_available=true
	npm_prefix=$(run_to 15 npm prefix -g 2>/dev/null | head -n 1)
	npm_root=$(run_to 15 npm root -g 2>/dev/null | head -n 1)
	if [ -n "$npm_prefix" ]; then npm_bin="$npm_prefix/bin"; fi
	if [ -n "$npm_root" ]; then npm_version=$(pkg_version "$npm_root/@openai/codex/package.json"); fi
	if [ -n "$npm_bin" ]; then
		npm_bin_index=$(printf '%s\n' "$PATH" | tr ':' '\n' | awk -v b="$npm_bin" '$0 == b { print NR - 1; f = 1; exit } END { if (!f) print -1 }')
	fi
fi
npm_bin_in_path=false
[ "$npm_bin_index" -ge 0 ] && npm_bin_in_path=true

# Each executable with its real path and version.
executables='['
distinct=''
n=0
conflicts=''
if [ -n "$found" ]; then
	while IFS= read -r exe; do
		n=$((n + 1))
		[ "$n" -le 6 ] || break
		real=$(realpath_of "$exe")
		ver=$(version_of "$exe")
		distinct="$distinct$real
"
		[ "$n" -gt 1 ] && executables="$executables,"
		act=false
		[ "$n" -eq 1 ] && act=true
		executables="$executables{\"path\":$(js "$exe"),\"real_path\":$(js "$real"),\"version\":$(jsn "$ver"),\"active\":$act}"
		if [ "$n" -gt 1 ]; then
			conflicts="${conflicts}$exe (version ${ver:-unknown}) is shadowed by $active (version ${active_version:-unknown})
"
		fi
	done <<EOT
$found
EOT
fi
executables="$executables]"
ndistinct=$(printf '%s' "$distinct" | awk 'NF && !seen[$0]++' | wc -l | tr -d ' ')

symptoms=''
if [ "$ndistinct" -gt 1 ]; then symptoms="${symptoms}multiple_executables
"; fi
if [ -n "$npm_version" ] && [ -n "$active_version" ] && [ "$npm_version" != "$active_version" ]; then
	symptoms="${symptoms}active_version_mismatch
"
	conflicts="${conflicts}npm installed $npm_version but the codex on PATH reports $active_version
"
fi
if [ -n "$npm_version" ] && [ -n "$npm_bin" ]; then
	if [ "$npm_bin_in_path" = false ]; then
		symptoms="${symptoms}npm_prefix_mismatch
"
		conflicts="${conflicts}npm global bin $npm_bin is not on PATH
"
	elif [ -n "$active" ] && [ "$(dirname "$active")" != "$npm_bin" ]; then
		symptoms="${symptoms}npm_prefix_mismatch
"
		conflicts="${conflicts}the active codex $active is not the one in npm global bin $npm_bin
"
	fi
fi
if [ "$installed" = false ]; then symptoms="${symptoms}not_installed
"; fi

suggest=''
case $symptoms in
*npm_prefix_mismatch* | *multiple_executables*) suggest="maintenance.codex.path_repair
" ;;
esac
case $symptoms in
*not_installed*) suggest="${suggest}maintenance.codex.update
" ;;
esac

if [ "$installed" = false ]; then
	summary="codex is not installed on PATH"
elif [ -z "$symptoms" ]; then
	summary="codex ${active_version:-(unknown version)} at $active; no conflict found"
else
	summary="codex ${active_version:-(unknown version)} at $active; $(printf '%s' "$symptoms" | awk 'NF' | tr '\n' ' ' | sed 's/ $//')"
fi

printf '{'
printf '"installed":%s,' "$installed"
printf '"active_binary":%s,' "$(jsn "$active")"
printf '"active_real_path":%s,' "$(jsn "$active_real")"
printf '"active_version":%s,' "$(jsn "$active_version")"
printf '"executables":%s,' "$executables"
printf '"npm_available":%s,' "$npm_available"
printf '"npm_prefix":%s,' "$(jsn "$npm_prefix")"
printf '"npm_bin_dir":%s,' "$(jsn "$npm_bin")"
printf '"npm_bin_in_path":%s,' "$npm_bin_in_path"
printf '"npm_bin_path_index":%s,' "$npm_bin_index"
printf '"installed_npm_version":%s,' "$(jsn "$npm_version")"
printf '"path_conflicts":%s,' "$(printf '%s' "$conflicts" | jarr)"
printf '"symptoms":%s,' "$(printf '%s' "$symptoms" | jarr)"
if [ "$include_shell" = true ]; then
	printf '"shell":%s,' "$(jsn "${SHELL:-}")"
	printf '"path_entries":%s,' "$(printf '%s\n' "$PATH" | tr ':' '\n' | jarr)"
fi
printf '"suggested_actions":%s,' "$(printf '%s' "$suggest" | jarr)"
printf '"summary":%s' "$(js "$summary")"
printf '}\n'
