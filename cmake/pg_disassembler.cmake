# Where `pipegemm inspect` and `make sass|ptx` find cuobjdump when
# $PG_CUOBJDUMP is not set: the CUDA toolkit's bin directory, else the
# official NVIDIA wheel (pip install nvidia-cuda-cuobjdump), whose binary
# lands in <site-packages>/nvidia/<cuNN or cuda_cuobjdump>/bin. .ci/run
# installs the wheel into .deps/pip with `pip install --target`.
#
# Sets PG_CUOBJDUMP_EXECUTABLE (cached; empty when none is found). The tool
# also searches the PATH at run time, so a build without it still works
# where cuobjdump is installed later.

set(_pg_disasm_hints "${CUDAToolkit_BIN_DIR}")

# The wheel's layout under a site-packages (or a pip --target) directory.
function(_pg_wheel_bins root out)
  file(GLOB _bins LIST_DIRECTORIES true "${root}/nvidia/*/bin")
  set(${out} ${_bins} PARENT_SCOPE)
endfunction()

_pg_wheel_bins("${PROJECT_SOURCE_DIR}/.deps/pip" _pg_bins)
list(APPEND _pg_disasm_hints ${_pg_bins})

# The site-packages of the python3 on the PATH (system and user).
find_program(PG_PYTHON3 NAMES python3)
mark_as_advanced(PG_PYTHON3)
if(PG_PYTHON3)
  execute_process(
    COMMAND "${PG_PYTHON3}" -c
      "import site, sysconfig; print(';'.join([sysconfig.get_paths()['purelib'], sysconfig.get_paths()['platlib'], site.getusersitepackages()]))"
    OUTPUT_VARIABLE _pg_sites
    OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _pg_python_rc
    ERROR_QUIET)
  if(_pg_python_rc EQUAL 0)
    foreach(_site IN LISTS _pg_sites)
      _pg_wheel_bins("${_site}" _pg_bins)
      list(APPEND _pg_disasm_hints ${_pg_bins})
    endforeach()
  endif()
endif()

find_program(PG_CUOBJDUMP_EXECUTABLE NAMES cuobjdump
  HINTS ${_pg_disasm_hints}
  DOC "cuobjdump for pipegemm inspect and make sass/ptx")
if(PG_CUOBJDUMP_EXECUTABLE)
  message(STATUS "cuobjdump (pipegemm inspect): ${PG_CUOBJDUMP_EXECUTABLE}")
  set(PG_CUOBJDUMP_BAKED "${PG_CUOBJDUMP_EXECUTABLE}")
else()
  message(STATUS "cuobjdump (pipegemm inspect): not found; install the CUDA "
                 "toolkit's or 'pip install nvidia-cuda-cuobjdump', or set "
                 "PG_CUOBJDUMP at run time")
  set(PG_CUOBJDUMP_BAKED "")
endif()
