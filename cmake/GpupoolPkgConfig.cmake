# Generates and installs gpupool.pc, so that a host built without CMake (make, Go's cgo, Rust's
# pkg-config crate, meson) can use the installed package:
#
#   cc host.c $(pkg-config --cflags --libs gpupool) -o host
#
# The libraries are static, so the file lists in Requires (not Requires.private) the pkg-config
# modules of every dependency they link, public or private: abseil's components, fmt, simdjson.
# They are read from the targets' link lists, so a dependency added in a CMakeLists.txt reaches
# gpupool.pc by itself. Libs ends with the C++ runtime, which a C program needs to link them.
#
# Included by GpupoolInstall.cmake with `gpupool_libraries` set to the installed library targets.

# pkg-config module of an imported dependency target, or "" for gpupool's own targets.
function(gpupool_pkg_config_module target out)
  set(module "")
  if(target MATCHES "^absl::(.+)$")
    set(module "absl_${CMAKE_MATCH_1}")
  elseif(target STREQUAL "fmt::fmt" OR target STREQUAL "fmt::fmt-header-only")
    set(module "fmt")
  elseif(target STREQUAL "simdjson::simdjson")
    set(module "simdjson")
  elseif(target STREQUAL "Eigen3::Eigen")
    set(module "eigen3")
  elseif(NOT target MATCHES "^gpupool(_|::)")
    message(WARNING "gpupool.pc: no pkg-config module known for dependency ${target}; "
                    "add it to cmake/GpupoolPkgConfig.cmake")
  endif()
  set(${out} "${module}" PARENT_SCOPE)
endfunction()

set(gpupool_pc_requires "")
foreach(library IN LISTS gpupool_libraries)
  get_target_property(deps ${library} LINK_LIBRARIES)
  foreach(dep IN LISTS deps)
    # Static libraries record private dependencies as $<LINK_ONLY:...>.
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.+)>$" "\\1" dep "${dep}")
    gpupool_pkg_config_module("${dep}" module)
    if(module)
      list(APPEND gpupool_pc_requires ${module})
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES gpupool_pc_requires)
list(SORT gpupool_pc_requires)
list(JOIN gpupool_pc_requires " " GPUPOOL_PC_REQUIRES)

# Dependents first, as a static link needs them: the C API, the simulator, io, then the core.
set(GPUPOOL_PC_LIBS "")
foreach(library gpupool_c gpupool_sim gpupool_io gpupool_core)
  if(library IN_LIST gpupool_libraries)
    string(APPEND GPUPOOL_PC_LIBS " -l$<TARGET_FILE_BASE_NAME:${library}>")
  endif()
endforeach()

# Relocatable: the prefix is found from where gpupool.pc lies (<libdir>/pkgconfig), so that
# `cmake --install --prefix ANYWHERE` gives a working file.
string(REGEX MATCHALL "[^/]+" libdir_parts "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
set(GPUPOOL_PC_PREFIX "\${pcfiledir}")
foreach(part IN LISTS libdir_parts)
  string(APPEND GPUPOOL_PC_PREFIX "/..")
endforeach()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(GPUPOOL_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(GPUPOOL_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(GPUPOOL_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(GPUPOOL_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()

configure_file(${PROJECT_SOURCE_DIR}/cmake/gpupool.pc.in ${PROJECT_BINARY_DIR}/gpupool.pc.in
               @ONLY)
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/gpupool.pc INPUT ${PROJECT_BINARY_DIR}/gpupool.pc.in)
install(FILES ${PROJECT_BINARY_DIR}/gpupool.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
