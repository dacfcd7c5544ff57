# Install rules: headers, libraries, the CLI and a relocatable package config, so that a
# consumer project can find_package(gpupool) and link gpupool::gpupool / gpupool::io (C++) or
# gpupool::c (the C API), or use pkg-config (gpupool.pc, GpupoolPkgConfig.cmake).
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/gpupool
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/gpupool/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gpupool)
set(gpupool_libraries gpupool_core gpupool_io gpupool_c)
if(TARGET gpupool_sim)
  list(APPEND gpupool_libraries gpupool_sim)
endif()
install(TARGETS ${gpupool_libraries} EXPORT gpupoolTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS gpupool_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT gpupoolTargets NAMESPACE gpupool::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpupool)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gpupoolConfig.cmake.in
        ${PROJECT_BINARY_DIR}/gpupoolConfig.cmake
        INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpupool)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gpupoolConfigVersion.cmake
        COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gpupoolConfig.cmake
              ${PROJECT_BINARY_DIR}/gpupoolConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpupool)
include(GpupoolPkgConfig)
