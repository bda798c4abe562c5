/* Gauge files are written atomically (src/io: temporary name beside the target, renamed
 * when whole): a write that fails part-way (here: the file-size limit, RLIMIT_FSIZE) returns
 * an error, leaves the file that was already under the name as it was and leaves no
 * temporary file behind; a write that succeeds leaves exactly the one file. Every format. */
#define _POSIX_C_SOURCE 200809L
#include "tq_test.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

static char tmpdir[256];

/* Entries of tmpdir other than . and .. */
static int count_entries(void)
{
    DIR *d = opendir(tmpdir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static void test_format(tq_gauge_format fmt, int prec, const tq_host_gauge *old, const tq_host_gauge *big)
{
    const char *name = tq_gauge_format_name(fmt);
    char path[512];
    snprintf(path, sizeof path, "%s/cfg.%s.%d", tmpdir, name, prec);

    /* a successful write: one file, nothing else */
    CHECK_OK(tq_gauge_write(path, fmt, old, prec));
    CHECK(count_entries() == 1, "%s/%d: %d entries after a write (a temporary file left?)", name, prec, count_entries());
    const long old_size = file_size(path);

    /* a write that fails part-way: larger than the file-size limit */
    struct rlimit saved, lim;
    getrlimit(RLIMIT_FSIZE, &saved);
    lim = saved;
    lim.rlim_cur = (rlim_t)old_size + 4096;
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit");
    tq_status s = tq_gauge_write(path, fmt, big, prec);
    setrlimit(RLIMIT_FSIZE, &saved);
    CHECK(s == TQ_ERR_IO, "%s/%d: a write past the file-size limit returned %d, not TQ_ERR_IO", name, prec, (int)s);
    CHECK(strstr(tq_last_error(), path) != NULL, "%s/%d: the message names the file: %s", name, prec, tq_last_error());

    /* the old file is intact and alone */
    CHECK(count_entries() == 1, "%s/%d: %d entries after a failed write", name, prec, count_entries());
    CHECK(file_size(path) == old_size, "%s/%d: size %ld after a failed write, was %ld", name, prec, file_size(path), old_size);
    tq_host_gauge back;
    memset(&back, 0, sizeof back);
    CHECK_OK(tq_gauge_read(path, TQ_FORMAT_AUTO, &back, NULL));
    int same = back.links && !memcmp(back.dims, old->dims, sizeof back.dims);
    for (int64_t i = 0; same && i < (int64_t)old->dims[0] * old->dims[1] * old->dims[2] * old->dims[3] * 72; i++)
        same = fabs(back.links[i] - old->links[i]) < (prec == 4 ? 1e-6 : 1e-15);
    CHECK(same, "%s/%d: the old file changed under a failed write", name, prec);
    tq_host_gauge_free(&back);
    unlink(path);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/tq_gauge_atomic_XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    /* exceeding RLIMIT_FSIZE raises SIGXFSZ; ignored, the write fails with EFBIG */
    signal(SIGXFSZ, SIG_IGN);

    tq_host_gauge old, big;
    CHECK_OK(tq_host_gauge_alloc(&old, (const int[4]){4, 4, 4, 4}));
    CHECK_OK(tq_host_gauge_alloc(&big, (const int[4]){8, 8, 8, 8}));
    CHECK_OK(tq_host_gauge_random(&old, 11));
    CHECK_OK(tq_host_gauge_random(&big, 12));
    const tq_gauge_format fmts[] = {TQ_FORMAT_MILC, TQ_FORMAT_SCIDAC, TQ_FORMAT_ILDG, TQ_FORMAT_NERSC};
    for (int i = 0; i < 4; i++)
        for (int prec = 4; prec <= 8; prec += 4) {
            if (fmts[i] == TQ_FORMAT_MILC && prec == 8) continue;   /* MILC v5 is single only */
            test_format(fmts[i], prec, &old, &big);
        }

    /* a directory that does not exist: an error naming the path, nothing created */
    char path[600];
    snprintf(path, sizeof path, "%s/no/such/dir/cfg", tmpdir);
    CHECK_ERR(tq_gauge_write(path, TQ_FORMAT_SCIDAC, &old, 8), TQ_ERR_IO);
    CHECK(strstr(tq_last_error(), path) != NULL, "the message names the file: %s", tq_last_error());
    CHECK(count_entries() == 0, "%d entries left", count_entries());

    tq_host_gauge_free(&old);
    tq_host_gauge_free(&big);
    rmdir(tmpdir);
    return tq_test_finish("test_gauge_io_atomic");
}
