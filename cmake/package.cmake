# What a C program needs to build against an installed cmlx: libcmlx, the
# mlx-c headers, a pkg-config file (cmlx.pc) and a CMake package
# (cmlxConfig.cmake, target cmlx::cmlx).  Both files describe their prefix
# relative to where they lie, so the same files serve `cmake --install`, the
# Python wheel (prefix site-packages/cmlx) and the dev package in build/pkg;
# python -m cmlx.config prints the flags from the package.

# cmlx_write_c_sdk_files(OUTDIR LIBDIR INCLUDEDIR): writes the two CMake files
# and cmlx.pc into OUTDIR for a prefix whose library lies in LIBDIR and whose
# headers lie in INCLUDEDIR (both relative to the prefix).
function(cmlx_write_c_sdk_files outdir libdir includedir)
  set(CMLX_PKG_LIBDIR "${libdir}")
  set(CMLX_PKG_INCLUDEDIR "${includedir}")
  get_target_property(_soname_version cmlx SOVERSION)
  if(_soname_version)
    set(CMLX_PKG_SONAME "libcmlx.so.${_soname_version}")
  else()
    set(CMLX_PKG_SONAME "libcmlx.so")
  endif()
  set(CMLX_PKG_LIBFILE "libcmlx.so")
  # The way up from the files' folders to the prefix.
  file(RELATIVE_PATH CMLX_PKG_CMAKE_UP "/p/${libdir}/cmake/cmlx" "/p")
  file(RELATIVE_PATH CMLX_PKG_PC_UP "/p/${libdir}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" CMLX_PKG_PC_UP "${CMLX_PKG_PC_UP}")
  string(REGEX REPLACE "/$" "" CMLX_PKG_CMAKE_UP "${CMLX_PKG_CMAKE_UP}")
  set(_in "${CMAKE_CURRENT_SOURCE_DIR}/cmake/package")
  configure_file("${_in}/cmlxConfig.cmake.in" "${outdir}/cmlxConfig.cmake" @ONLY)
  configure_file("${_in}/cmlxConfigVersion.cmake.in" "${outdir}/cmlxConfigVersion.cmake" @ONLY)
  configure_file("${_in}/cmlx.pc.in" "${outdir}/cmlx.pc" @ONLY)
endfunction()

# cmlx_install_c_sdk(PREFIX_DIR LIBDIR INCLUDEDIR): installs the library, the
# headers and the three files under PREFIX_DIR ("" for a plain install).
function(cmlx_install_c_sdk prefix_dir libdir includedir)
  set(_out "${CMAKE_BINARY_DIR}/c-sdk/install")
  cmlx_write_c_sdk_files("${_out}" "${libdir}" "${includedir}")
  if(prefix_dir)
    set(prefix_dir "${prefix_dir}/")
  endif()
  install(TARGETS cmlx LIBRARY DESTINATION "${prefix_dir}${libdir}")
  install(DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}/include/mlx"
          DESTINATION "${prefix_dir}${includedir}")
  install(FILES "${_out}/cmlxConfig.cmake" "${_out}/cmlxConfigVersion.cmake"
          DESTINATION "${prefix_dir}${libdir}/cmake/cmlx")
  install(FILES "${_out}/cmlx.pc" DESTINATION "${prefix_dir}${libdir}/pkgconfig")
endfunction()
