#!/bin/sh
# ctest build.exports_only_public_api: the shared libraries export exactly the API their headers
# declare with TFD_API (tfdev/export.h), and no internal helper.
#   check_exports.sh CC INCLUDE_DIR LUA_INCLUDE_DIRS LIBTFDEV LIBTFDEV_LUA
# Declared names come from the preprocessed headers, so comments and macros cannot fool the list.
set -eu
cc=$1 inc=$2 luainc=$3 lib=$4 lualib=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# Names declared with TFD_API in the given headers: each declaration is one statement up to ';'.
declared() {
  for h in "$@"; do printf '#include "tfdev/%s"\n' "$h"; done >"$tmp/all.c"
  set -- -I"$inc"
  for d in $(echo "$luainc" | tr ';' ' '); do set -- "$@" -I"$d"; done
  "$cc" -E -P "$@" -D'TFD_API=__tfd_api__' "$tmp/all.c" | tr '\n' ' ' | tr ';' '\n' |
    grep '__tfd_api__' | sed -E 's/^[^(]*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*\(.*/\1/' | sort -u
}
# Names a library defines in its dynamic symbol table (functions and data), linker-made ones aside.
exported() {
  nm -D --defined-only "$1" | awk '$2 ~ /^[TDBRVWiu]$/ {print $3}' | sed 's/@.*//' |
    grep -v -E '^(_init|_fini|_edata|_end|__bss_start)$' | sort -u
}

check() { # LIB DECLARED-FILE
  exported "$1" >"$tmp/exp"
  if [ ! -s "$tmp/exp" ]; then echo "FAIL: $1 exports nothing (nm -D failed?)"; fail=1; return; fi
  extra=$(comm -23 "$tmp/exp" "$2")
  missing=$(comm -13 "$tmp/exp" "$2")
  if [ -n "$extra" ]; then echo "FAIL: $1 exports names no public header declares:"; echo "$extra"; fail=1; fi
  if [ -n "$missing" ]; then echo "FAIL: $1 does not export these declared functions:"; echo "$missing"; fail=1; fi
  echo "$1: $(wc -l <"$tmp/exp") exported names, all declared in include/tfdev"
}

# A function declared in a public header without TFD_API would be hidden, and hosts would fail to
# link against it: list the headers' file-scope declarations of tfd_/tfdev_/luaopen_ functions
# that lack the marker (a function pointer member, "(*name)(", is not one).
unmarked() {
  for h in "$inc"/tfdev/*.h; do printf '#include "%s"\n' "$h"; done >"$tmp/every.c"
  set -- -I"$inc"
  for d in $(echo "$luainc" | tr ';' ' '); do set -- "$@" -I"$d"; done
  # Keep only the text that comes from include/tfdev (line markers name each file).
  "$cc" -E "$@" -D'TFD_API=__tfd_api__' "$tmp/every.c" |
    awk -v dir="$inc/tfdev/" '/^# [0-9]+ "/ { f = $3; gsub(/"/, "", f); ours = index(f, dir) == 1; next } ours' |
    tr '\n' ' ' | tr ';{}' '\n\n\n' | grep -v '__tfd_api__' | grep -v '^[[:space:]]*typedef' |
    grep -E '^[[:space:]]*[A-Za-z_][A-Za-z0-9_[:space:]*]*[[:space:]*](tfd_|tfdev_|luaopen_)[A-Za-z0-9_]*[[:space:]]*\(' |
    grep -v -E '\([[:space:]]*\*' || true
}
unmarked >"$tmp/unmarked"
if [ -s "$tmp/unmarked" ]; then
  echo "FAIL: declarations in include/tfdev without TFD_API (they would not be exported):"
  cat "$tmp/unmarked"
  fail=1
fi

core_headers=$(cd "$inc/tfdev" && ls *.h | grep -v -x -e lua.h -e export.h)
# shellcheck disable=SC2086
declared $core_headers >"$tmp/core.decl"
declared lua.h >"$tmp/all.decl"
comm -13 "$tmp/core.decl" "$tmp/all.decl" >"$tmp/lua.decl" # lua.h includes tfdev.h: keep its own names
[ -s "$tmp/core.decl" ] && [ -s "$tmp/lua.decl" ] || { echo "FAIL: no declarations found in $inc/tfdev"; exit 1; }
check "$lib" "$tmp/core.decl"
check "$lualib" "$tmp/lua.decl"

# Internal helpers that must stay inside: a tensor copy between allocators, kernel creation, the
# backend host table, the bindings' own helpers.
for name in tfd_tensor_copy_to tfd_kernel_create tfd_backend_host_table tfd_log; do
  if nm -D --defined-only "$lib" | awk '{print $3}' | grep -q -x "$name"; then
    echo "FAIL: $lib exports the internal $name"; fail=1
  fi
  nm "$lib" | awk '{print $3}' | grep -q -x "$name" || echo "note: $name is not in $lib's symbol table at all"
done
for name in tfdev_push_tensor tfdev_state tfdev_common_open tfdev_embedded_lua_modules; do
  if nm -D --defined-only "$lualib" | awk '{print $3}' | grep -q -x "$name"; then
    echo "FAIL: $lualib exports the internal $name"; fail=1
  fi
done
exit $fail
