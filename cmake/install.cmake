# kgen as an installed CMake package. `cmake --install build --prefix P`
# puts the static libraries in P/lib, the headers in P/include/kgen and the
# package files in P/lib/cmake/kgen, so another project needs only
#
#   find_package(kgen REQUIRED)
#   target_link_libraries(app PRIVATE kgen::kgen)
#
# examples/saxpy-consumer is such a project; scripts/check-install.sh builds
# it against a fresh install.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KGEN_PACKAGE_VERSION 0.1.0)
set(KGEN_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kgen)
set(KGEN_INTERNAL_INCLUDE_DIR ${CMAKE_INSTALL_INCLUDEDIR}/kgen/internal)

# ---- targets ----------------------------------------------------------------
# Exported name -> library target. Static libraries carry their PRIVATE link
# items into the export too, so every in-tree library the umbrella reaches is
# listed (samples/, tools/ and bench/ are not part of the library).
set(KGEN_EXPORTED_LIBS ir:kgen_ir dsl:kgen_dsl translate:kgen_translate codegen:kgen_codegen jit:kgen_jit
    runtime:kgen_runtimes ops:kgen_ops graph:kgen_graph)
set(KGEN_EXPORTED_TARGETS)
foreach(pair IN LISTS KGEN_EXPORTED_LIBS)
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 export_name)
  list(GET pair 1 target)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  # The headers use C++20 (std::span, std::source_location): consumers must too.
  target_compile_features(${target} INTERFACE cxx_std_20)
  add_library(kgen::${export_name} ALIAS ${target})
  list(APPEND KGEN_EXPORTED_TARGETS ${target})
endforeach()

# kgen::kgen: everything, plus the public headers (include/kgen/kgen.h).
add_library(kgen_umbrella INTERFACE)
set_target_properties(kgen_umbrella PROPERTIES EXPORT_NAME kgen)
target_link_libraries(kgen_umbrella INTERFACE ${KGEN_EXPORTED_TARGETS})
target_include_directories(kgen_umbrella INTERFACE
  $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
add_library(kgen::kgen ALIAS kgen_umbrella)

install(TARGETS ${KGEN_EXPORTED_TARGETS} EXPORT kgenTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${KGEN_INTERNAL_INCLUDE_DIR})
install(TARGETS kgen_umbrella EXPORT kgenTargets)
install(EXPORT kgenTargets NAMESPACE kgen:: DESTINATION ${KGEN_PACKAGE_DIR})

# ---- headers ----------------------------------------------------------------
# The public API is include/kgen/*.h, installed as include/kgen/. Those
# headers include the libraries' own headers by their source-tree paths
# ("dsl/dsl.h"), so the internal ones are installed with that layout under
# include/kgen/internal/, the exported libraries' include directory, where
# the #include lines work unchanged. Only the headers the public set reaches
# are installed: the closure of quoted #includes from include/kgen/*.h. The
# closure, not every header of ir/ ... graph/: a consumer's compiler can
# need nothing else, and the rest would look like API it could rely on. It
# is computed when installing, so it follows the sources without a
# reconfigure, and an #include it cannot resolve fails the install instead of
# leaving a header out.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/kgen DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
# The builtins header of plain C++ kernels, for compiling them on the host.
install(FILES ${CMAKE_SOURCE_DIR}/translate/kgen_kernel.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kgen)
install(CODE "set(kgen_source_dir \"${CMAKE_SOURCE_DIR}\")
set(kgen_internal_dest \"${KGEN_INTERNAL_INCLUDE_DIR}\")")
install(CODE [[
  file(GLOB queue "${kgen_source_dir}/include/kgen/*.h")
  set(reached)
  while(queue)
    list(POP_FRONT queue header)
    list(FIND reached "${header}" seen)  # not IN_LIST: install scripts run without policies
    if(NOT seen EQUAL -1)
      continue()
    endif()
    list(APPEND reached "${header}")
    get_filename_component(header_dir "${header}" DIRECTORY)
    file(STRINGS "${header}" include_lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS include_lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" name "${line}")
      # The compiler's order: beside the includer, then the include roots.
      set(found "")
      foreach(root "${header_dir}" "${kgen_source_dir}" "${kgen_source_dir}/include")
        if(EXISTS "${root}/${name}")
          get_filename_component(found "${root}/${name}" ABSOLUTE)
          break()
        endif()
      endforeach()
      if(NOT found)
        message(FATAL_ERROR "kgen install: ${header} includes \"${name}\", which is neither beside it "
                            "nor under ${kgen_source_dir} (a generated header cannot be public)")
      endif()
      list(APPEND queue "${found}")
    endforeach()
  endwhile()
  foreach(header IN LISTS reached)
    file(RELATIVE_PATH rel "${kgen_source_dir}" "${header}")
    if(rel MATCHES "^include/")
      continue()  # public: installed with include/kgen
    endif()
    get_filename_component(rel_dir "${rel}" DIRECTORY)
    file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/${kgen_internal_dest}/${rel_dir}" TYPE FILE FILES "${header}")
  endforeach()
]])

# ---- package files ----------------------------------------------------------
# Link items given as absolute files (the static shaderc/glslang/SPIRV-Tools
# archives, CUDA's libnvrtc: jit/CMakeLists.txt) are written into the export
# as they are; the config checks that they still exist.
set(KGEN_LINKED_FILES)
foreach(target IN LISTS KGEN_EXPORTED_TARGETS)
  get_target_property(links ${target} LINK_LIBRARIES)
  string(REGEX MATCHALL "/[^;,<>$]+\\.(a|so)(\\.[0-9]+)*" files "${links}")
  list(APPEND KGEN_LINKED_FILES ${files})
endforeach()
list(REMOVE_DUPLICATES KGEN_LINKED_FILES)

set(KGEN_PACKAGE_BUILD_DIR ${CMAKE_BINARY_DIR}/kgen-package)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/kgenConfig.cmake.in
                              ${KGEN_PACKAGE_BUILD_DIR}/kgenConfig.cmake
                              INSTALL_DESTINATION ${KGEN_PACKAGE_DIR})
write_basic_package_version_file(${KGEN_PACKAGE_BUILD_DIR}/kgenConfigVersion.cmake
                                 VERSION ${KGEN_PACKAGE_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${KGEN_PACKAGE_BUILD_DIR}/kgenConfig.cmake ${KGEN_PACKAGE_BUILD_DIR}/kgenConfigVersion.cmake
        DESTINATION ${KGEN_PACKAGE_DIR})
