/* Linked into culua's programs in sanitized builds only (CULUA_SANITIZE, tools/sanitize): dlclose
   does nothing, so that every library a process loaded is still mapped when LeakSanitizer reports
   at exit. Open MPI unloads its components in MPI_Finalize; without this, their allocations (leaks
   of Open MPI's, suppressed by name in tools/sanitize.supp) show as frames of "<unknown module>"
   that no suppression can match. */
#include <dlfcn.h>

int dlclose(void* handle) {
  (void)handle;
  return 0;
}
