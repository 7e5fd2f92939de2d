@echo off
rem python_launcher_check.cmd: capdex built-in action maintenance.python.launcher_check (Windows).
rem Lists the Python installations the Windows launcher knows (py -0p) and the python.exe
rem files on PATH (where python), which shows the Microsoft Store alias shadowing a real
rem install. Read only. Prints one JSON object and exits 0, also when py is absent.
setlocal EnableDelayedExpansion
set "launcher=false"
where py >nul 2>nul && set "launcher=true"
set "installs="
if "!launcher!"=="true" (
  for /f "delims=" %%i in ('py -0p 2^>nul') do (
    set "l=%%i"
    set "l=!l:\=\\!"
    set "l=!l:"='!"
    if defined installs set "installs=!installs!,"
    set "installs=!installs!"!l!""
  )
)
set "onpath="
set "store_alias=false"
for /f "delims=" %%i in ('where python 2^>nul') do (
  set "p=%%i"
  echo %%i | findstr /i "WindowsApps" >nul && set "store_alias=true"
  set "p=!p:\=\\!"
  if defined onpath set "onpath=!onpath!,"
  set "onpath=!onpath!"!p!""
)
echo {"launcher_installed":!launcher!,"installations":[!installs!],"python_on_path":[!onpath!],"store_alias_on_path":!store_alias!}
exit /b 0
