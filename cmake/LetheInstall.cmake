# Install and export: lib/cmake/Lethe/LetheConfig.cmake (+ version file) with targets lethe::*,
# and lib/pkgconfig/lethe.pc. Only when Lethe is the top-level project.
include(CMakePackageConfigHelpers)

set(LETHE_INSTALL_TARGETS lethe_alloc lethe_decoders lethe_cache lethe_engine)
if(TARGET lethe_malloc)
  list(APPEND LETHE_INSTALL_TARGETS lethe_malloc)
endif()
if(TARGET lethe_malloc_static)
  list(APPEND LETHE_INSTALL_TARGETS lethe_malloc_static)
endif()

install(TARGETS ${LETHE_INSTALL_TARGETS}
  EXPORT LetheTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(layer alloc decoders cache engine)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${layer}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()

set(LETHE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Lethe)
install(EXPORT LetheTargets NAMESPACE lethe:: DESTINATION ${LETHE_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/LetheConfig.cmake.in
  ${PROJECT_BINARY_DIR}/LetheConfig.cmake INSTALL_DESTINATION ${LETHE_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/LetheConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/LetheConfig.cmake ${PROJECT_BINARY_DIR}/LetheConfigVersion.cmake
  DESTINATION ${LETHE_CMAKE_DIR})

# pkg-config: the layers are static archives, so their dependencies are listed for --static.
set(LETHE_PC_REQUIRES_PRIVATE "libpng zlib sqlite3 libjpeg freetype2 harfbuzz")
set(LETHE_PC_LIBS_PRIVATE "-lgif -llitehtml -lgumbo -lpthread")
if(LETHE_EXTRA_PC_REQUIRES_PRIVATE)
  string(APPEND LETHE_PC_REQUIRES_PRIVATE " ${LETHE_EXTRA_PC_REQUIRES_PRIVATE}")
endif()
file(RELATIVE_PATH LETHE_PC_RELATIVE_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/lethe.pc.in ${PROJECT_BINARY_DIR}/lethe.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/lethe.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
