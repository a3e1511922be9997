#!/bin/sh
# ctest install.host: installs this build into a temporary prefix and builds host.c against it as a
# host project would, then runs each build:
#   1. find_package(tfdev): tfdev::lua with Debian's shared Lua, and tfdev::tfdev alone (C only);
#   2. pkg-config: `pkg-config --cflags --libs tfdev-lua lua5.4`, and `... tfdev` (C only);
#   3. Lua linked statically (liblua5.4.a, from liblua5.4-dev): the embedding host with -Wl,-E and
#      without (it links libtfdev_lua, so ld exports the Lua functions that uses), and a host that
#      links no tfdev and loads tfdev/core.so with require, with -Wl,-E;
#   4. that last host without -Wl,-E must fail to load core.so ("undefined symbol: lua..."): the
#      executable then exports no Lua function, and libtfdev_lua, loaded at run time, finds none.
#      This is why docs/embedding.md tells hosts that link Lua statically to link with -Wl,-E.
#   5. the example host (examples/host/: a fixed-timestep loop with an async policy network), built
#      with find_package, with pkg-config, and with Lua linked statically (-Wl,-E), run for 600
#      frames each; it prints its frame figures.
#   run.sh BUILD_DIR CC SANITIZE CMAKE LAUNCHER
set -eu
build=$1 cc=$2 sanitize=$3 cmake=$4 launcher=$(echo "${5:-}" | tr ';' ' ')
src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
# Sanitized builds install instrumented libraries: the hosts are built with the same sanitizers.
flags=""
[ -n "$sanitize" ] && flags="-fsanitize=$sanitize -fno-omit-frame-pointer"

step() { printf '== %s\n' "$*"; }
run() { # a host must print "host: ok" and exit 0
  # shellcheck disable=SC2086
  if ! $launcher "$@" >"$tmp/out" 2>&1; then cat "$tmp/out"; echo "FAIL: $*"; exit 1; fi
  cat "$tmp/out"
  grep -q '^host: ok' "$tmp/out" || { echo "FAIL: $* printed no 'host: ok'"; exit 1; }
}

step "cmake --install $build --prefix $prefix"
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
pc=$(find "$prefix" -name tfdev.pc)
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
for f in "$prefix/include/tfdev/lua.h" "$prefix/include/tfdev/export.h" "$libdir/pkgconfig/tfdev-lua.pc" \
         "$libdir/cmake/tfdev/tfdevConfig.cmake" "$libdir/cmake/tfdev/tfdevConfigVersion.cmake"; do
  [ -f "$f" ] || { echo "FAIL: not installed: $f"; exit 1; }
done
ls "$libdir"/libtfdev.so "$libdir"/libtfdev_lua.so >/dev/null
cdir=$(dirname "$(find "$prefix" -path '*/lua/5.4/tfdev/core.so')")
cdir=$(dirname "$cdir")
ldir=$prefix/share/lua/5.4
# core.so finds libtfdev_lua and libtfdev by its RUNPATH, with no library path set.
readelf -d "$cdir/tfdev/core.so" | grep -q 'RUNPATH.*\$ORIGIN' || { echo "FAIL: core.so has no \$ORIGIN RUNPATH"; exit 1; }

step "find_package(tfdev)"
"$cmake" -S "$src" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; exit 1; }
"$cmake" --build "$tmp/cmake-build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
run "$tmp/cmake-build/host"
run "$tmp/cmake-build/c_host"

step "pkg-config"
export PKG_CONFIG_PATH="$pcdir"
pkg-config --exists --print-errors tfdev tfdev-lua
cflags="-std=c11 -Wall -Wextra -Werror $flags"
# shellcheck disable=SC2046,SC2086
$cc $cflags -o "$tmp/host-pc" "$src/host.c" $(pkg-config --cflags --libs tfdev-lua lua5.4) -Wl,-rpath,"$libdir"
run "$tmp/host-pc"
# shellcheck disable=SC2046,SC2086
$cc $cflags -DHOST_C_ONLY -o "$tmp/c-host-pc" "$src/host.c" $(pkg-config --cflags --libs tfdev) -Wl,-rpath,"$libdir"
run "$tmp/c-host-pc"

step "Lua linked statically"
lua_a=$(pkg-config --variable=libdir lua5.4)/liblua5.4.a
[ -f "$lua_a" ] || { echo "FAIL: no static Lua at $lua_a (liblua5.4-dev provides it)"; exit 1; }
# shellcheck disable=SC2046,SC2086
$cc $cflags -o "$tmp/host-static" "$src/host.c" $(pkg-config --cflags --libs tfdev-lua) "$lua_a" -lm -ldl \
  -Wl,-E -Wl,-rpath,"$libdir"
run "$tmp/host-static"
# Without -Wl,-E this one still runs: ld exports from an executable the symbols that the shared
# libraries on its link line use, so the Lua functions libtfdev_lua calls are exported. Any other
# Lua C module a script loads later may use one that is not, hence -Wl,-E in docs/embedding.md.
# shellcheck disable=SC2046,SC2086
$cc $cflags -o "$tmp/host-static-no-E" "$src/host.c" $(pkg-config --cflags --libs tfdev-lua) "$lua_a" -lm -ldl \
  -Wl,-rpath,"$libdir"
run "$tmp/host-static-no-E"
# shellcheck disable=SC2046,SC2086
$cc $cflags -DHOST_REQUIRE_ONLY -o "$tmp/require-static" "$src/host.c" $(pkg-config --cflags lua5.4) "$lua_a" -lm -ldl -Wl,-E
run "$tmp/require-static" "$cdir" "$ldir"

step "Lua linked statically, without -Wl,-E: loading tfdev/core.so must fail"
# shellcheck disable=SC2046,SC2086
$cc $cflags -DHOST_REQUIRE_ONLY -o "$tmp/require-static-no-E" "$src/host.c" $(pkg-config --cflags lua5.4) "$lua_a" -lm -ldl
if "$tmp/require-static-no-E" "$cdir" "$ldir" >"$tmp/out" 2>&1; then
  cat "$tmp/out"; echo "FAIL: without -Wl,-E the host loaded tfdev/core.so: docs/embedding.md's advice would be wrong"; exit 1
fi
cat "$tmp/out"
grep -q 'undefined symbol: lua' "$tmp/out" || { echo "FAIL: it failed, but not for a missing Lua symbol"; exit 1; }
echo "as expected: without -Wl,-E the executable exports no Lua symbol for the modules it loads"

step "examples/host: find_package(tfdev), 600 frames"
ex=$(cd "$src/../../examples/host" && pwd)
"$cmake" -S "$ex" -B "$tmp/example-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; exit 1; }
"$cmake" --build "$tmp/example-build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
example() { # the example host prints its figures and exits 0 when steps completed
  # shellcheck disable=SC2086
  if ! $launcher "$@" >"$tmp/out" 2>&1; then cat "$tmp/out"; echo "FAIL: $*"; exit 1; fi
  cat "$tmp/out"
  grep -q '^frames: 600$' "$tmp/out" && grep -q '^steps completed: [1-9]' "$tmp/out" ||
    { echo "FAIL: $* did not run 600 frames with completed steps"; exit 1; }
}
example "$tmp/example-build/host" 600

step "examples/host: pkg-config, 600 frames"
# shellcheck disable=SC2046,SC2086
$cc $cflags -DPOLICY_PATH="\"$ex/policy.lua\"" -o "$tmp/example-pc" "$ex/host.c" \
  $(pkg-config --cflags --libs tfdev-lua lua5.4) -lm -Wl,-rpath,"$libdir"
example "$tmp/example-pc" 600

step "examples/host: Lua linked statically, with -Wl,-E, 600 frames"
# shellcheck disable=SC2046,SC2086
$cc $cflags -DPOLICY_PATH="\"$ex/policy.lua\"" -o "$tmp/example-static" "$ex/host.c" \
  $(pkg-config --cflags --libs tfdev-lua) "$lua_a" -lm -ldl -Wl,-E -Wl,-rpath,"$libdir"
example "$tmp/example-static" 600
echo "install test: ok"
