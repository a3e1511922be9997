-- LuaRocks package of tfdev's Lua module: `luarocks make --lua-version=5.4 rockspecs/tfdev-scm-1.rockspec`
-- from the repository's root builds it with CMake and installs tfdev/core.so (with libtfdev and
-- libtfdev_lua beside it) and the tfdev/*.lua files into the LuaRocks tree. Debian's luarocks makes
-- /usr/bin/lua Lua 5.1 when installed: --lua-version=5.4 (or `luarocks config lua_version 5.4`)
-- picks 5.4. Build needs: cmake, a C compiler, pkg-config and the libraries scripts/setup installs
-- (OpenBLAS, protobuf-c, cJSON; oneDNN and CUDA when found).
rockspec_format = "3.0"
package = "tfdev"
version = "scm-1"
source = {
  -- `luarocks make` builds the checkout it runs in and never fetches this; it is the address a
  -- published rock would download (`luarocks install`), to be set when the repository has one.
  url = "git+https://example.invalid/tfdev.git",
}
description = {
  summary = "TensorFlow's common runtime (devices, factories, DirectSession) in C11, with a Lua 5.4 face",
  license = "MIT", -- LICENSE at the repository's root
  detailed = [[
tfdev rebuilds TensorFlow's common runtime (devices, the device-factory registry, DirectSession with its
placer, partitioner and executor) as a small C11 library driven from Lua: require "tfdev".
]],
}
dependencies = {
  "lua >= 5.4, < 5.5",
}
build = {
  type = "cmake",
  variables = {
    CMAKE_BUILD_TYPE = "Release",
    CMAKE_INSTALL_PREFIX = "$(PREFIX)",
    TFDEV_LUAROCKS = "ON",
    TFDEV_TESTS = "OFF",
    -- A user's compiler may warn where CI's does not: warnings stay warnings here.
    TFDEV_WERROR = "OFF",
    TFDEV_INSTALL_LUA_CDIR = "$(LIBDIR)",
    TFDEV_INSTALL_LUA_LDIR = "$(LUADIR)",
  },
}
