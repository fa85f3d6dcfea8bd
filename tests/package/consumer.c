/* A C program using the installed pipegemm the way a project would: through
 * find_package(pipegemm) or pkg-config. Needs no GPU: it reads the library's
 * version and registry and the status table.
 *
 *   consumer            prints one line; exit 0 when the library agrees with
 *                       the header it was compiled against */
#include <stdio.h>
#include <string.h>

#include <pipegemm.h>

int main(void) {
  if (pg_version() != PIPEGEMM_VERSION ||
      strcmp(pg_version_string(), PIPEGEMM_VERSION_STRING) != 0) {
    fprintf(stderr, "consumer: header %s, library %s (%d)\n", PIPEGEMM_VERSION_STRING,
            pg_version_string(), pg_version());
    return 1;
  }
  const pg_variant_info *cp_async = pg_variant_find("cp_async");
  if (pg_variant_count() < 1 || !cp_async || pg_variant_find("no such variant")) {
    fprintf(stderr, "consumer: the registry is not what the header describes\n");
    return 1;
  }
  if (strcmp(pg_strerror(PG_ERR_ARCH), "variant cannot run on this GPU's architecture") != 0 ||
      strcmp(pg_status_name(PG_ERR_STAGES), "PG_ERR_STAGES") != 0) {
    fprintf(stderr, "consumer: unexpected status strings\n");
    return 1;
  }
  /* Argument checks happen before any device work: no GPU needed. */
  if (pg_sgemm("cp_async", 0, -1, 1, 1, 1.0f, NULL, 1, NULL, 1, 0.0f, NULL, 1, 0) !=
      PG_ERR_INVALID_ARG) {
    fprintf(stderr, "consumer: a negative M was not rejected\n");
    return 1;
  }
  printf("consumer: pipegemm %s, %d variants, cp_async takes %d..%d stages\n",
         pg_version_string(), pg_variant_count(), cp_async->min_stages, cp_async->max_stages);
  return 0;
}
