# Writes ${OUT} with the project revision (git describe --always --dirty --tags of ${SOURCE_DIR}, or
# "unknown" outside a git checkout) as SPARSEDITTO_REVISION. Run at every build by the
# sparseditto_revision target; the file is rewritten only when the revision changed, so a build of an
# unchanged tree recompiles nothing.
execute_process(COMMAND git describe --always --dirty --tags
  WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE revision
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT revision)
  set(revision unknown)
endif()
file(WRITE ${OUT}.new "#define SPARSEDITTO_REVISION \"${revision}\"\n")
file(COPY_FILE ${OUT}.new ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.new)
