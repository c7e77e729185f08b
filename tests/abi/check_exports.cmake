# Checks that libcmlx.so exports exactly the mlx-c API: every function the
# public headers declare, and nothing else (no cm_*/capi_* internals, no
# data symbols).
#
#   cmake -DLIB=<libcmlx.so> -DNM=<nm> -DCC=<c compiler> -DINCLUDE=<include/>
#         -P check_exports.cmake
#
# The declared set comes from the headers as the compiler sees them (cc -E of
# mlx/c/mlx.h), so names behind HAS_FLOAT16 / HAS_BFLOAT16 count exactly
# when this compiler declares them, as they do when it builds the library.
foreach(_v LIB NM CC INCLUDE)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "check_exports.cmake: -D${_v}=... is required")
  endif()
endforeach()

execute_process(
  COMMAND "${CC}" -std=c11 -E -P -I "${INCLUDE}" "${INCLUDE}/mlx/c/mlx.h"
  OUTPUT_VARIABLE _pp RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(_rc)
  message(FATAL_ERROR "preprocessing mlx/c/mlx.h failed: ${_err}")
endif()
# A declaration names its function right before "(": `int mlx_add(`.  A
# function-pointer typedef puts ")" there instead: `(*mlx_closure_fn)(`.
string(REGEX MATCHALL "[A-Za-z0-9_]+[ \t\r\n]*\\(" _calls "${_pp}")
set(_declared "")
foreach(_c IN LISTS _calls)
  string(REGEX REPLACE "[ \t\r\n]*\\($" "" _name "${_c}")
  if(_name MATCHES "^_?mlx_")
    list(APPEND _declared "${_name}")
  endif()
endforeach()
list(REMOVE_DUPLICATES _declared)
list(LENGTH _declared _ndecl)
if(_ndecl LESS 100)
  message(FATAL_ERROR "only ${_ndecl} mlx_ declarations found in ${INCLUDE}: is that the API?")
endif()

# -P: "name type [value size]" per line, the name first.
execute_process(
  COMMAND "${NM}" -D --defined-only -P "${LIB}"
  OUTPUT_VARIABLE _nm RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(_rc)
  message(FATAL_ERROR "nm -D ${LIB} failed: ${_err}")
endif()
string(REGEX MATCHALL "[^\n]+" _lines "${_nm}")
set(_exported "")
set(_extra "")
foreach(_l IN LISTS _lines)
  string(REGEX MATCH "^[^ ]+" _name "${_l}")
  string(REGEX REPLACE "@.*$" "" _name "${_name}")
  list(APPEND _exported "${_name}")
  list(FIND _declared "${_name}" _at)
  if(_at EQUAL -1)
    list(APPEND _extra "${_l}")
  endif()
endforeach()
set(_missing "")
foreach(_name IN LISTS _declared)
  list(FIND _exported "${_name}" _at)
  if(_at EQUAL -1)
    list(APPEND _missing "${_name}")
  endif()
endforeach()

list(LENGTH _exported _nexp)
list(LENGTH _extra _nextra)
list(LENGTH _missing _nmissing)
message(STATUS "${LIB}: ${_nexp} exported, ${_ndecl} declared in mlx/c")
if(_nextra)
  list(JOIN _extra "\n  " _s)
  message(SEND_ERROR "${_nextra} exported symbols are not mlx-c API "
                     "(make them static, or rename them out of mlx_*):\n  ${_s}")
endif()
if(_nmissing)
  list(JOIN _missing "\n  " _s)
  message(SEND_ERROR "${_nmissing} functions declared in include/mlx/c are not exported "
                     "(not defined, or not matched by src/capi/libcmlx.map):\n  ${_s}")
endif()
