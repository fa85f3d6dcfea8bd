# Where `pipegemm inspect` and `make sass|ptx` find cuobjdump when
# $PG_CUOBJDUMP is not set, and the nvdisasm that `cuobjdump -sass` runs: the
# CUDA toolkit's bin directory, else NVIDIA's wheels (nvidia-cuda-cuobjdump,
# nvidia-cuda-nvdisasm), whose binaries land in
# <site-packages>/nvidia/<cuNN or cuda_cuobjdump>/bin. scripts/deps.sh puts
# them in .deps/pip when the toolkit has none.
#
# Sets PG_CUOBJDUMP_EXECUTABLE and PG_NVDISASM_EXECUTABLE (cached; NOTFOUND
# when none is found, and searched again at the next configure), and
# PG_CUOBJDUMP_BAKED / PG_NVDISASM_BAKED (the path, or ""). The tool also
# searches the PATH at run time, so a build without them still works where
# they are installed later.

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
# cuobjdump looks for nvdisasm on the PATH only; the tool puts this one's
# directory there. The one beside cuobjdump first: the same release.
set(_pg_nvdisasm_hints ${_pg_disasm_hints})
if(PG_CUOBJDUMP_EXECUTABLE)
  get_filename_component(_pg_dir "${PG_CUOBJDUMP_EXECUTABLE}" DIRECTORY)
  list(PREPEND _pg_nvdisasm_hints "${_pg_dir}")
endif()
find_program(PG_NVDISASM_EXECUTABLE NAMES nvdisasm
  HINTS ${_pg_nvdisasm_hints}
  DOC "nvdisasm, which cuobjdump -sass runs")

foreach(_tool IN ITEMS CUOBJDUMP NVDISASM)
  string(TOLOWER ${_tool} _name)
  if(PG_${_tool}_EXECUTABLE)
    message(STATUS "${_name} (pipegemm inspect): ${PG_${_tool}_EXECUTABLE}")
    set(PG_${_tool}_BAKED "${PG_${_tool}_EXECUTABLE}")
  else()
    message(STATUS "${_name} (pipegemm inspect): not found; install the CUDA "
                   "toolkit's, or run scripts/deps.sh (pip wheel nvidia-cuda-${_name})")
    set(PG_${_tool}_BAKED "")
  endif()
endforeach()
