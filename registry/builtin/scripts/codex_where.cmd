@echo off
rem codex_where.cmd: capdex built-in action maintenance.codex.windows_path_check (Windows).
rem Lists every codex on PATH in the order Windows finds them (where codex), the version the
rem first one reports and the npm global prefix. Read only: changes nothing.
rem Prints one JSON object and exits 0, also when codex or npm is absent.
setlocal EnableDelayedExpansion
set "list="
set "active="
set "count=0"
for /f "delims=" %%i in ('where codex 2^>nul') do (
  set "p=%%i"
  set "p=!p:\=\\!"
  if defined list set "list=!list!,"
  set "list=!list!"!p!""
  if not defined active set "active=%%i"
  set /a count+=1
)
set "version="
if defined active (
  for /f "tokens=2" %%v in ('"!active!" --version 2^>nul') do if not defined version set "version=%%v"
)
set "prefix="
for /f "delims=" %%i in ('npm prefix -g 2^>nul') do if not defined prefix set "prefix=%%i"
set "installed=false"
if defined active set "installed=true"
set "conflict=false"
if !count! GTR 1 set "conflict=true"
set "jactive=null"
if defined active (
  set "a=!active:\=\\!"
  set "jactive="!a!""
)
set "jversion=null"
if defined version set "jversion="!version!""
set "jprefix=null"
if defined prefix (
  set "b=!prefix:\=\\!"
  set "jprefix="!b!""
)
echo {"installed":!installed!,"active_binary":!jactive!,"active_version":!jversion!,"executables":[!list!],"count":!count!,"multiple_executables":!conflict!,"npm_prefix":!jprefix!}
exit /b 0
