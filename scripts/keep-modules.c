/* Preloaded into the tests of the sanitizer run (scripts/sanitizer-test), never part of the
 * library: dlclose() does nothing, so the modules that OpenMPI and PMIx load while MPI starts
 * stay mapped to the end of the process. LeakSanitizer then scans their globals (what they
 * still point to is no leak) and can name their code in a report's frames, which the fast
 * frame-pointer unwinder (ASan's default, 4x faster at start-up than DWARF unwinding) leaves
 * as the only frame it can trust inside libraries built without frame pointers. Without it,
 * a leak allocated in an unloaded module has no module name that a suppression can match. */
int dlclose(void *handle);

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
