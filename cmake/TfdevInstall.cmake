# What `cmake --install` installs: the whole of tfdev with its packages for hosts, or for LuaRocks
# the Lua module alone. Included by the top-level CMakeLists.txt once every target exists.
if(TFDEV_LUAROCKS)
  # For LuaRocks (rockspecs/): the module's files only, in the rock's lib and lua directories, which
  # LuaRocks then deploys into its tree. libtfdev and libtfdev_lua go beside core.so (found there by
  # its $ORIGIN RUNPATH), unversioned, since LuaRocks copies files and would turn the soname links
  # into copies; the backend modules go beside libtfdev, where the loader looks.
  foreach(t tfdev_shared tfdev_lua)
    set_property(TARGET ${t} PROPERTY VERSION)
    set_property(TARGET ${t} PROPERTY SOVERSION)
  endforeach()
  set_target_properties(tfdev_lua_core PROPERTIES INSTALL_RPATH "$ORIGIN")
  install(TARGETS tfdev_shared tfdev_lua tfdev_lua_core LIBRARY DESTINATION ${TFDEV_INSTALL_LUA_CDIR}/tfdev)
  if(TFDEV_WITH_CUDA)
    install(TARGETS tfdev_cuda LIBRARY DESTINATION ${TFDEV_INSTALL_LUA_CDIR}/tfdev)
  endif()
  install(FILES ${TFDEV_LUA_FILES} DESTINATION ${TFDEV_INSTALL_LUA_LDIR}/tfdev)
  install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/tfdev)
else()
  install(TARGETS tfdev RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(TARGETS tfdev_static ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(TARGETS tfdev_shared tfdev_lua EXPORT tfdevTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(TARGETS tfdev_lua_core LIBRARY DESTINATION ${TFDEV_INSTALL_LUA_CDIR}/tfdev)
  install(FILES ${TFDEV_LUA_FILES} DESTINATION ${TFDEV_INSTALL_LUA_LDIR}/tfdev)
  install(DIRECTORY include/tfdev DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN "*.in" EXCLUDE)
  install(FILES ${PROJECT_BINARY_DIR}/include/tfdev/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tfdev)
  install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/tfdev)

  # Packages for hosts: find_package(tfdev) (tfdev::tfdev, tfdev::lua) and pkg-config (tfdev, tfdev-lua).
  include(CMakePackageConfigHelpers)
  set(TFDEV_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tfdev)
  install(EXPORT tfdevTargets NAMESPACE tfdev:: DESTINATION ${TFDEV_CMAKE_DIR})
  configure_package_config_file(packaging/tfdevConfig.cmake.in ${PROJECT_BINARY_DIR}/packaging/tfdevConfig.cmake
                                INSTALL_DESTINATION ${TFDEV_CMAKE_DIR})
  # 0.x: a minor version may change the API, so only the same minor version is compatible.
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/packaging/tfdevConfigVersion.cmake
                                   COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/packaging/tfdevConfig.cmake ${PROJECT_BINARY_DIR}/packaging/tfdevConfigVersion.cmake
          DESTINATION ${TFDEV_CMAKE_DIR})
  # The .pc files name the prefix relative to themselves, so an installed tree can be moved.
  file(RELATIVE_PATH TFDEV_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
  string(REGEX REPLACE "/$" "" TFDEV_PC_TO_PREFIX "${TFDEV_PC_TO_PREFIX}")
  set(TFDEV_PC_LIBS_PRIVATE "-lm -ldl -lpthread")
  if(TFDEV_WITH_ONEDNN)
    string(PREPEND TFDEV_PC_LIBS_PRIVATE "${DNNL_LIBRARY} ${GOMP_LIBRARY} ")
  endif()
  foreach(pc tfdev tfdev-lua)
    configure_file(packaging/${pc}.pc.in ${PROJECT_BINARY_DIR}/packaging/${pc}.pc @ONLY)
    install(FILES ${PROJECT_BINARY_DIR}/packaging/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  endforeach()
  if(TFDEV_WITH_CUDA)
    install(TARGETS tfdev_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
endif()
