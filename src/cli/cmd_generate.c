/* taskqcd generate: quenched SU(3) configurations (pure-gauge Wilson action) by heat-bath
 * and overrelaxation sweeps (tq_generator; under mpirun each rank holds a box of the grid),
 * with a progress line per measured sweep and the result written through the gauge-file
 * writers; checkpoints (--save-every, --checkpoint) and --resume, which goes on bit for bit
 * as the uninterrupted run would have.
 *
 * A checkpoint FILE is a short text file (the parameters, the sweeps done, a digest of the
 * links) naming its configuration beside it, FILE.sweepN (SciDAC, double precision: the
 * links exactly). Saving writes the configuration first, then the text under a temporary
 * name, synced and renamed over FILE, and only then removes the previous configuration: at
 * every moment FILE names a complete configuration that matches its digest. Under mpirun
 * each rank writes its part of the configuration and the parts' digests combine (XOR of
 * per-site hashes), as the final configuration is written. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "taskqcd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void generate_usage(FILE *o)
{
    fprintf(o,
        "usage: taskqcd generate [--dim X Y Z T] [--beta B] [--sweeps N] [--or K] [--seed S]\n"
        "         [--start cold|hot] [--out FILE [--format scidac|ildg|milc|nersc] [--precision 4|8]]\n"
        "         [--measure-every M] [--reunit-every R] [--where auto|cpu|cuda|any]\n"
        "         [--gridsize X Y Z T] [--block X Y Z T | --nslab S]\n"
        "         [--save-every N] [--checkpoint CK] [--resume CK] [runtime options]\n"
        "Pure-gauge Wilson action (SU(3)): each sweep is one Cabibbo-Marinari heat-bath sweep\n"
        "(Kennedy-Pendleton SU(2) sampling) followed by K overrelaxation sweeps, on a checkerboard,\n"
        "as tasks on every worker. Prints the average plaquette (normalised to 1; spatial and\n"
        "temporal parts) and the Polyakov loop every M sweeps with the time per sweep (measurements\n"
        "included), reunitarises every R sweeps (both as tasks, where the links are),\n"
        "and writes the last configuration to FILE. The result depends only on the dimensions,\n"
        "beta, the seed, the start and the sweeps (not on blocks, ranks, workers or scheduler).\n"
        "Defaults: 8 8 8 8, beta 6.0, 20 sweeps, 4 overrelaxation sweeps, seed 1, cold start,\n"
        "measure every sweep, reunitarise every 10, SciDAC in double precision, on the GPUs\n"
        "when there are any, otherwise on the CPU workers (--where auto; any mixes both kinds,\n"
        "and the configuration then depends on which kind ran which task).\n"
        "The links lie on blocks (--block, even extents dividing a rank's part; the tasks of a\n"
        "block read its links and the layers next to it, exchanged as faces); under mpirun\n"
        "the ranks form the grid --gridsize (default: the smallest faces). --nslab S: S blocks\n"
        "of whole time slices along t (S divides T). Default blocks: whole time slices of a\n"
        "rank's part, one per GPU, or one per CPU worker (an even number of slices each).\n"
        "Checkpoints: --save-every N writes one after every N-th sweep and after the last,\n"
        "--checkpoint CK alone after the last; CK defaults to FILE.ckpt (--out FILE). CK is a\n"
        "short text file (parameters, sweeps done, a digest of the links) naming its\n"
        "configuration CK.sweepN beside it (SciDAC, double precision); each is replaced\n"
        "atomically, so an interrupted run leaves the previous checkpoint whole.\n"
        "--resume CK goes on from a checkpoint: --sweeps is the total (sweeps done included),\n"
        "and the result is bit for bit that of the uninterrupted run on the same kind of\n"
        "worker. --dim, --beta, --seed, --or, --reunit-every and --start default to the\n"
        "checkpoint's; given ones must agree with it (otherwise exit status 2).\n");
}

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "taskqcd generate: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
    generate_usage(stderr);
    return 2;
}

/* The options that decide the configuration, as bits of generate_opts.given. */
enum { GIVEN_DIM = 1, GIVEN_BETA = 2, GIVEN_SEED = 4, GIVEN_OR = 8, GIVEN_REUNIT = 16, GIVEN_START = 32 };

/* What the command line asks for. */
typedef struct generate_opts {
    int dims[4], sweeps, nor, measure, reunit, prec, hot, save_every, given;
    mode_t file_mode;          /* new files: 0666 less the umask */
    const char *out, *where, *ckpt, *resume;
    char ckpt_buf[4096];
    tq_gauge_format fmt;
    tq_generator_params gp;
} generate_opts;

/* A checkpoint's text file: the state besides the links, and what the links depend on. */
typedef struct ckpt_meta {
    int version;   /* of the file read (written: CKPT_VERSION) */
    int dims[4], nor, reunit, hot;
    double beta;
    unsigned long long seed, sweeps, refused, digest;
    char where[8];
    char config[4096];   /* the configuration file's name, in the checkpoint's directory */
} ckpt_meta;

/* Version 2: the digest is sites_digest (combinable over parts: checkpoints written by
 * parts); version 1's (links_digest, sequential over the whole field) is still read. */
#define CKPT_VERSION 2

/* The options with a value v. Returns 0, or the exit code of a usage error. */
static int parse_generate_option(generate_opts *o, const char *a, const char *v)
{
    char *end = NULL;
    if (!strcmp(a, "--beta")) { o->gp.beta = strtod(v, &end); o->given |= GIVEN_BETA; if (*end || !(o->gp.beta > 0)) return usage_error("bad --beta", v); }
    else if (!strcmp(a, "--sweeps")) { o->sweeps = (int)strtol(v, &end, 10); if (*end || o->sweeps < 0) return usage_error("bad --sweeps", v); }
    else if (!strcmp(a, "--or")) { o->nor = (int)strtol(v, &end, 10); o->given |= GIVEN_OR; if (*end || o->nor < 0) return usage_error("bad --or", v); }
    else if (!strcmp(a, "--seed")) { o->gp.seed = strtoull(v, &end, 0); o->given |= GIVEN_SEED; if (*end || v[0] == '-') return usage_error("bad --seed", v); }
    else if (!strcmp(a, "--measure-every")) { if (tq_cli_parse_positive(v, &o->measure)) return usage_error("bad --measure-every", v); }
    else if (!strcmp(a, "--reunit-every")) { o->given |= GIVEN_REUNIT; if (tq_cli_parse_positive(v, &o->reunit)) return usage_error("bad --reunit-every", v); }
    else if (!strcmp(a, "--save-every")) { if (tq_cli_parse_positive(v, &o->save_every)) return usage_error("bad --save-every", v); }
    else if (!strcmp(a, "--nslab")) { if (tq_cli_parse_positive(v, &o->gp.nslab)) return usage_error("bad --nslab", v); }
    else if (!strcmp(a, "--out")) o->out = v;
    else if (!strcmp(a, "--checkpoint")) o->ckpt = v;
    else if (!strcmp(a, "--resume")) o->resume = v;
    else if (!strcmp(a, "--format")) { if (tq_gauge_format_parse(v, &o->fmt) || o->fmt == TQ_FORMAT_AUTO) return usage_error("bad --format", v); }
    else if (!strcmp(a, "--precision")) { o->prec = atoi(v); if (o->prec != 4 && o->prec != 8) return usage_error("bad --precision (4 or 8)", v); }
    else if (!strcmp(a, "--start")) {
        o->given |= GIVEN_START;
        if (!strcmp(v, "hot")) o->hot = 1;
        else if (strcmp(v, "cold")) return usage_error("bad --start (cold or hot)", v);
    } else if (!strcmp(a, "--where")) {
        if (strcmp(v, "auto") && strcmp(v, "any") && strcmp(v, "cpu") && strcmp(v, "cuda")) return usage_error("bad --where", v);
        o->where = v;
    } else return usage_error("unknown option", a);
    return 0;
}

/* 0 when a file can be made in path's directory (made and removed again), else 1 after
 * saying why not. */
static int check_writable(const char *path, const char *what, const char *me)
{
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= sizeof tmp) {
        fprintf(stderr, "%s: cannot write %s %s: name too long\n", me, what, path);
        return 1;
    }
    const int fd = mkstemp(tmp);
    if (fd < 0) { fprintf(stderr, "%s: cannot write %s %s: %s\n", me, what, path, strerror(errno)); return 1; }
    close(fd);
    remove(tmp);
    return 0;
}

/* The checkpoint's name (--checkpoint, else OUT.ckpt, else the resumed one) when there are
 * checkpoints; checks that the outputs can be written. Returns -1 to go on, else the exit
 * code. */
static int settle_outputs(generate_opts *o, const char *me)
{
    if (!o->ckpt && o->save_every) {
        if (o->out && (size_t)snprintf(o->ckpt_buf, sizeof o->ckpt_buf, "%s.ckpt", o->out) < sizeof o->ckpt_buf) o->ckpt = o->ckpt_buf;
        else if (o->resume) o->ckpt = o->resume;
        else return usage_error("--save-every needs --checkpoint CK or --out FILE (checkpoint FILE.ckpt)", NULL);
    }
    if (o->out && check_writable(o->out, "the output", me)) return 1;
    if (o->ckpt && check_writable(o->ckpt, "the checkpoint", me)) return 1;
    return -1;
}

/* Fills o from the command line (runtime options already removed). Returns -1 to go on,
 * otherwise the exit code (0 after --help). */
static int parse_generate_args(int argc, char **argv, generate_opts *o)
{
    const generate_opts defaults = {.dims = {8, 8, 8, 8}, .sweeps = 20, .nor = 4, .measure = 1, .reunit = 10,
                                    .where = "auto", .fmt = TQ_FORMAT_SCIDAC};
    *o = defaults;
    tq_generator_params_default(&o->gp);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) { generate_usage(stdout); return 0; }
        if (!strcmp(a, "--dim")) {
            if (tq_cli_parse_dims(argc, argv, &i, o->dims)) return usage_error("--dim needs four positive extents", NULL);
            o->given |= GIVEN_DIM;
            continue;
        }
        if (!strcmp(a, "--gridsize") || !strcmp(a, "--block")) {
            if (tq_cli_parse_dims(argc, argv, &i, a[2] == 'g' ? o->gp.procs : o->gp.block))
                return usage_error(a[2] == 'g' ? "--gridsize needs four positive extents" : "--block needs four positive extents", NULL);
            continue;
        }
        if (!v) return usage_error("unexpected or incomplete argument", a);
        i++;
        int rc = parse_generate_option(o, a, v);
        if (rc) return rc;
    }
    if (!o->prec) o->prec = o->fmt == TQ_FORMAT_MILC ? 4 : 8;
    return -1;
}

/* ---- checkpoints ------------------------------------------------------------------------ */

/* v with the fewest digits that read back as v (5.8, not 5.7999999999999998). */
static const char *exact_double(double v, char buf[32])
{
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(buf, 32, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}

/* FNV-1a over the links' bit patterns, each double's 8 bytes least significant first (the
 * same on every machine). */
static unsigned long long links_digest(const tq_host_gauge *h)
{
    const int64_t n = (int64_t)h->dims[0] * h->dims[1] * h->dims[2] * h->dims[3] * 72;
    uint64_t d = 14695981039346656037ULL;
    for (int64_t i = 0; i < n; i++) {
        uint64_t bits;
        memcpy(&bits, &h->links[i], sizeof bits);
        for (int k = 0; k < 8; k++) { d ^= (bits >> (8 * k)) & 0xff; d *= 1099511628211ULL; }
    }
    return (unsigned long long)d;
}

/* XOR over the sites of FNV-1a of each site's global index (8 bytes) and its 72 links'
 * bit patterns, least significant byte first: the same for the whole field and for parts
 * combined in any order. h holds the box of sites at offset in the lattice dims. */
static uint64_t sites_digest(const tq_host_gauge *h, const int dims[4], const int offset[4])
{
    const int *l = h->dims;
    const int64_t n = (int64_t)l[0] * l[1] * l[2] * l[3];
    uint64_t all = 0;
    for (int64_t s = 0; s < n; s++) {
        uint64_t d = 14695981039346656037ULL;
        int x[4];
        int64_t r = s;
        for (int mu = 0; mu < 4; mu++) { x[mu] = offset[mu] + (int)(r % l[mu]); r /= l[mu]; }
        const uint64_t g = (uint64_t)((((int64_t)x[3] * dims[2] + x[2]) * dims[1] + x[1]) * dims[0] + x[0]);
        for (int k = 0; k < 8; k++) { d ^= (g >> (8 * k)) & 0xff; d *= 1099511628211ULL; }
        for (int i = 0; i < 72; i++) {
            uint64_t bits;
            memcpy(&bits, &h->links[s * 72 + i], sizeof bits);
            for (int k = 0; k < 8; k++) { d ^= (bits >> (8 * k)) & 0xff; d *= 1099511628211ULL; }
        }
        all ^= d;
    }
    return all;
}

/* The XOR of every rank's d (each bit's count summed exactly, then its parity). */
static int xor_across_ranks(uint64_t *d)
{
    double bits[64];
    for (int k = 0; k < 64; k++) bits[k] = (double)((*d >> k) & 1);
    if (tq_allreduce_sum(bits, 64)) return 1;
    uint64_t x = 0;
    for (int k = 0; k < 64; k++) x |= (uint64_t)((long long)bits[k] & 1) << k;
    *d = x;
    return 0;
}

/* The path of a file named name in the directory of path. */
static int sibling_path(const char *path, const char *name, char *buf, size_t len)
{
    const char *slash = strrchr(path, '/');
    const int dirlen = slash ? (int)(slash - path + 1) : 0;
    return (size_t)snprintf(buf, len, "%.*s%s", dirlen, path, name) >= len ? -1 : 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Flushes a written file (or a directory: the rename in it) to the disk. 0 or an errno. */
static int sync_path(const char *path)
{
    const int fd = open(path, O_RDONLY);
    if (fd < 0) return errno;
    const int err = fsync(fd) && errno != EINVAL ? errno : 0;   /* EINVAL: cannot be synced (some directories) */
    close(fd);
    return err;
}

/* Writes text to path atomically: a temporary file in the same directory, flushed and
 * synced, renamed over path, the directory synced. 0 or an errno (path untouched). */
static int write_text_atomic(const char *path, const char *text, mode_t mode)
{
    char tmp[4200], dir[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= sizeof tmp || sibling_path(path, ".", dir, sizeof dir))
        return ENAMETOOLONG;
    const int fd = mkstemp(tmp);   /* mode 0600: widened to what a new file gets */
    if (fd < 0) return errno;
    FILE *f = fdopen(fd, "w");
    if (!f) { const int err = errno; close(fd); remove(tmp); return err; }
    errno = 0;
    int err = fchmod(fd, mode) || fputs(text, f) < 0 || fflush(f) || fsync(fd) ? (errno ? errno : EIO) : 0;
    if (fclose(f) && !err) err = errno ? errno : EIO;
    if (!err && rename(tmp, path)) err = errno;
    if (err) { remove(tmp); return err; }
    sync_path(dir);
    return 0;
}

static void format_meta(const ckpt_meta *m, char *buf, size_t len)
{
    char beta[32];
    snprintf(buf, len,
             "taskqcd-generate-checkpoint %d\n"
             "dims %d %d %d %d\nbeta %s\nseed %llu\nor %d\nreunit-every %d\nstart %s\nwhere %s\n"
             "sweeps %llu\nrefused %llu\ndigest %016llx\nconfig %s\n",
             CKPT_VERSION, m->dims[0], m->dims[1], m->dims[2], m->dims[3], exact_double(m->beta, beta), m->seed, m->nor, m->reunit,
             m->hot ? "hot" : "cold", m->where, m->sweeps, m->refused, m->digest, m->config);
}

/* One "key value" line of a checkpoint into m; *seen gets the key's bit. 0, or -1 for an
 * unknown key or a bad value. */
static int parse_meta_line(ckpt_meta *m, const char *key, const char *v, int *seen)
{
    static const char *const keys[] = {"dims", "beta", "seed", "or", "reunit-every", "start", "where", "sweeps", "refused",
                                       "digest", "config"};
    int k = 0, n = 0;
    while (k < 11 && strcmp(key, keys[k])) k++;
    char start[8];
    switch (k) {
    case 0: n = sscanf(v, "%d %d %d %d", &m->dims[0], &m->dims[1], &m->dims[2], &m->dims[3]) == 4; break;
    case 1: n = sscanf(v, "%lf", &m->beta) == 1 && m->beta > 0; break;
    case 2: n = sscanf(v, "%llu", &m->seed) == 1; break;
    case 3: n = sscanf(v, "%d", &m->nor) == 1 && m->nor >= 0; break;
    case 4: n = sscanf(v, "%d", &m->reunit) == 1 && m->reunit > 0; break;
    case 5: n = sscanf(v, "%7s", start) == 1 && (!strcmp(start, "hot") || !strcmp(start, "cold")); m->hot = !strcmp(start, "hot"); break;
    case 6: n = sscanf(v, "%7s", m->where) == 1; break;
    case 7: n = sscanf(v, "%llu", &m->sweeps) == 1; break;
    case 8: n = sscanf(v, "%llu", &m->refused) == 1; break;
    case 9: n = sscanf(v, "%llx", &m->digest) == 1; break;
    case 10: n = strlen(v) < sizeof m->config && *v && !strchr(v, '/'); if (n) strcpy(m->config, v); break;
    default: return -1;
    }
    *seen |= 1 << k;
    return n ? 0 : -1;
}

/* Reads a checkpoint's text file. 0, or 1 after saying what is wrong (me NULL: silently). */
static int read_meta(const char *path, ckpt_meta *m, const char *me)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "r");
    if (!f) {
        if (me) fprintf(stderr, "%s: cannot read the checkpoint %s: %s\n", me, path, strerror(errno));
        return 1;
    }
    char line[4200];
    int version = 0, seen = 0, lineno = 0, bad = 0;
    if (!fgets(line, sizeof line, f) || sscanf(line, "taskqcd-generate-checkpoint %d", &version) != 1) bad = 1;
    while (!bad && fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = 0;
        char *sp = strchr(line, ' ');
        if (sp) *sp = 0;
        if (!sp || parse_meta_line(m, line, sp + 1, &seen)) bad = lineno + 1;
    }
    fclose(f);
    const int known = version == 1 || version == CKPT_VERSION;
    m->version = version;
    const char *why = bad ? "is not a taskqcd generate checkpoint" : !known ? "has another version"
                    : seen != (1 << 11) - 1 ? "is incomplete" : NULL;
    if (why && me) {
        fprintf(stderr, "%s: the checkpoint %s %s", me, path, why);
        if (bad) fprintf(stderr, " (line %d)", bad);
        if (!bad && !known) fprintf(stderr, " (%d; this taskqcd reads 1 and %d)", version, CKPT_VERSION);
        fputc('\n', stderr);
    }
    return why != NULL;
}

/* The checkpoint's state after the generator's sweeps so far (its digest still to come) and
 * the path of its configuration, CK.sweepN beside CK. 0, or 1 after saying why not. */
static int checkpoint_meta(tq_generator *g, const generate_opts *o, const char *where, unsigned long long refused,
                           ckpt_meta *m, char *cfg, size_t cfg_len, const char *me)
{
    memset(m, 0, sizeof *m);
    memcpy(m->dims, o->dims, sizeof m->dims);
    m->beta = o->gp.beta;
    m->seed = (unsigned long long)o->gp.seed;
    m->nor = o->nor;
    m->reunit = o->reunit;
    m->hot = o->hot;
    snprintf(m->where, sizeof m->where, "%s", where);
    m->sweeps = tq_generator_sweeps(g);
    m->refused = refused;
    snprintf(m->config, sizeof m->config, "%s.sweep%llu", base_name(o->ckpt), m->sweeps);
    if (sibling_path(o->ckpt, m->config, cfg, cfg_len)) { fprintf(stderr, "%s: checkpoint name too long\n", me); return 1; }
    return 0;
}

/* After the configuration cfg is written (rank 0): flushes it, puts the text file o->ckpt
 * in place (atomically) and removes the configuration the old one named. 0, or 1 after
 * saying why not (the previous checkpoint then stays, the new configuration is removed). */
static int finish_checkpoint(const generate_opts *o, const ckpt_meta *m, const char *cfg, const char *me)
{
    ckpt_meta old;
    char text[5000], oldcfg[4200];
    int err = sync_path(cfg);
    /* the configuration the old text file names, to remove once the new one is in place
     * (only a name this command makes: CK.sweepN) */
    const size_t nb = strlen(base_name(o->ckpt));
    const int had_old = access(o->ckpt, F_OK) == 0 && read_meta(o->ckpt, &old, NULL) == 0 &&
                        !strncmp(old.config, base_name(o->ckpt), nb) && !strncmp(old.config + nb, ".sweep", 6);
    format_meta(m, text, sizeof text);
    if (!err) err = write_text_atomic(o->ckpt, text, o->file_mode);
    if (err) {
        fprintf(stderr, "%s: cannot write the checkpoint %s: %s\n", me, o->ckpt, strerror(err));
        if (!had_old || strcmp(old.config, m->config)) remove(cfg);
        return 1;
    }
    if (had_old && strcmp(old.config, m->config) && !sibling_path(o->ckpt, old.config, oldcfg, sizeof oldcfg)) remove(oldcfg);
    return 0;
}

/* Resuming: the options that decide the configuration default to the checkpoint's m;
 * given ones must agree with it. Returns -1 to go on, else 2 after naming each mismatch. */
static int apply_meta(generate_opts *o, const ckpt_meta *m, const char *me)
{
    const char *ck = o->resume;
    char b1[32], b2[32];
    int bad = 0;
    if ((o->given & GIVEN_DIM) && memcmp(o->dims, m->dims, sizeof m->dims))
        bad = fprintf(stderr, "%s: --dim %d %d %d %d disagrees with the checkpoint %s (%d %d %d %d)\n", me, o->dims[0],
                      o->dims[1], o->dims[2], o->dims[3], ck, m->dims[0], m->dims[1], m->dims[2], m->dims[3]);
    if ((o->given & GIVEN_BETA) && o->gp.beta != m->beta)
        bad = fprintf(stderr, "%s: --beta %s disagrees with the checkpoint %s (beta %s)\n", me, exact_double(o->gp.beta, b1), ck,
                      exact_double(m->beta, b2));
    if ((o->given & GIVEN_SEED) && (unsigned long long)o->gp.seed != m->seed)
        bad = fprintf(stderr, "%s: --seed %llu disagrees with the checkpoint %s (seed %llu)\n", me,
                      (unsigned long long)o->gp.seed, ck, m->seed);
    if ((o->given & GIVEN_OR) && o->nor != m->nor)
        bad = fprintf(stderr, "%s: --or %d disagrees with the checkpoint %s (or %d)\n", me, o->nor, ck, m->nor);
    if ((o->given & GIVEN_REUNIT) && o->reunit != m->reunit)
        bad = fprintf(stderr, "%s: --reunit-every %d disagrees with the checkpoint %s (reunit-every %d)\n", me, o->reunit, ck,
                      m->reunit);
    if ((o->given & GIVEN_START) && o->hot != m->hot)
        bad = fprintf(stderr, "%s: --start %s disagrees with the checkpoint %s (start %s)\n", me, o->hot ? "hot" : "cold", ck,
                      m->hot ? "hot" : "cold");
    if (m->sweeps > (unsigned long long)o->sweeps)
        bad = fprintf(stderr, "%s: the checkpoint %s has %llu sweeps done, more than --sweeps %d (the total)\n", me, ck,
                      m->sweeps, o->sweeps);
    if (bad) {
        fprintf(stderr, "%s: a resumed run keeps the checkpoint's parameters (leave them out to take them from it)\n", me);
        return 2;
    }
    memcpy(o->dims, m->dims, sizeof o->dims);
    o->gp.beta = m->beta;
    o->gp.seed = m->seed;
    o->nor = m->nor;
    o->reunit = m->reunit;
    o->hot = m->hot;
    return -1;
}

/* --resume: the checkpoint's parameters into o and its configuration into h, checked
 * against the digest. Returns -1 to go on, else the exit code after saying why not. */
static int load_checkpoint(generate_opts *o, ckpt_meta *m, tq_host_gauge *h, const char *me)
{
    char cfg[4200];
    if (read_meta(o->resume, m, me)) return 1;
    const int rc = apply_meta(o, m, me);
    if (rc >= 0) return rc;
    if (sibling_path(o->resume, m->config, cfg, sizeof cfg)) { fprintf(stderr, "%s: checkpoint name too long\n", me); return 1; }
    if (tq_gauge_read(cfg, TQ_FORMAT_AUTO, h, NULL)) {
        fprintf(stderr, "%s: cannot read the checkpoint's configuration: %s\n", me, tq_last_error());
        return 1;
    }
    static const int origin[4] = {0, 0, 0, 0};
    const unsigned long long digest = m->version == 1 ? links_digest(h) : sites_digest(h, h->dims, origin);
    if (memcmp(h->dims, m->dims, sizeof m->dims) || digest != m->digest) {
        fprintf(stderr, "%s: the configuration %s is not the one the checkpoint %s describes (dimensions or digest "
                "differ): the checkpoint is damaged\n", me, cfg, o->resume);
        tq_host_gauge_free(h);
        return 1;
    }
    return -1;
}

/* What the sweeps need besides the options: the generator, the kind of worker, the refusals
 * before this run (resumed), a host field for checkpoints. */
typedef struct sweep_ctx {
    tq_generator *g;
    int rank;                /* rank 0 writes checkpoints' text files (and gathered configurations) */
    const char *where, *me;
    unsigned long long refused_before;
    tq_host_gauge *h;        /* the whole field, for gathered checkpoints */
    int verbosity;
    const tq_lattice *parts; /* the generator's ranks: checkpoints by parts (NULL on one rank: written whole) */
} sweep_ctx;

/* The checkpoint's configuration written by parts (every rank its time slices, digests
 * combined), or gathered into c->h and written by rank 0; m->digest set. Every rank
 * returns the same: 0, or 1 after saying why. */
static int write_checkpoint_configuration(const sweep_ctx *c, ckpt_meta *m, const char *cfg)
{
    if (!c->parts) {
        if (tq_generator_export(c->g, c->h)) { fprintf(stderr, "%s: checkpoint: %s\n", c->me, tq_last_error()); return tq_cli_agree(c->me, 1); }
        static const int origin[4] = {0, 0, 0, 0};
        m->digest = sites_digest(c->h, c->h->dims, origin);
        const int bad = c->rank == 0 && tq_gauge_write(cfg, TQ_FORMAT_SCIDAC, c->h, 8);
        if (bad) fprintf(stderr, "%s: checkpoint: %s\n", c->me, tq_last_error());
        return tq_cli_agree(c->me, bad);
    }
    tq_lattice_info li;
    tq_host_gauge part = {{0}, NULL};
    int bad = tq_lattice_get_info(c->parts, &li) || tq_host_gauge_alloc(&part, li.local) || tq_generator_export(c->g, &part);
    int offset[4];
    for (int mu = 0; mu < 4; mu++) offset[mu] = li.coords[mu] * li.local[mu];
    uint64_t d = bad ? 0 : sites_digest(&part, li.dims, offset);
    if (bad) fprintf(stderr, "%s: checkpoint: %s\n", c->me, tq_last_error());
    /* the digest's reduction and the write are collective: every rank goes into them or none */
    bad = tq_cli_agree(c->me, bad);
    if (!bad && xor_across_ranks(&d)) bad = 1;
    if (!bad && tq_gauge_write_local(cfg, TQ_FORMAT_SCIDAC, c->parts, &part, 8)) {
        fprintf(stderr, "%s: checkpoint: %s\n", c->me, tq_last_error());
        bad = 1;
    }
    tq_host_gauge_free(&part);
    m->digest = d;
    return tq_cli_agree(c->me, bad);
}

/* A checkpoint after sweep s when asked for: every --save-every sweeps and after the last. */
static int maybe_checkpoint(const sweep_ctx *c, const generate_opts *o, int s)
{
    if (!o->ckpt || !((o->save_every && s % o->save_every == 0) || s == o->sweeps)) return 0;
    uint64_t refused = 0;
    ckpt_meta m;
    char cfg[4200];
    int bad = tq_generator_refused(c->g, &refused);
    if (bad) fprintf(stderr, "%s: checkpoint: %s\n", c->me, tq_last_error());
    if (!bad) bad = checkpoint_meta(c->g, o, c->where, c->refused_before + refused, &m, cfg, sizeof cfg, c->me);
    if (tq_cli_agree(c->me, bad) || write_checkpoint_configuration(c, &m, cfg)) return 1;
    /* rank 0 puts the text file in place; every rank learns whether it could */
    if (tq_cli_agree(c->me, c->rank == 0 ? finish_checkpoint(o, &m, cfg, c->me) : 0)) return 1;
    if (c->verbosity >= 1)
        printf("  checkpoint after sweep %d: %s%s\n", s, o->ckpt, c->parts ? " (by parts, every rank its sites)" : "");
    return 0;
}

/* The sweeps after the first `done`, with a progress line per measured sweep (verbosity >=
 * 1) and the checkpoints; *p: the last measured plaquette. Returns 0, or 1 after saying
 * why not. */
static int run_sweeps(const sweep_ctx *c, const generate_opts *o, int done, tq_plaquette *p)
{
    double t_last = tq_cli_now();
    int since = 0;
    for (int s = done + 1; s <= o->sweeps; s++) {
        if (tq_generator_sweep(c->g, o->nor)) goto fail;
        since++;
        const int meas = s % o->measure == 0 || s == o->sweeps;
        if (s % o->reunit == 0 && tq_generator_reunitarize(c->g)) goto fail;
        if (meas) {
            double pr, pi;
            if (tq_generator_measure(c->g, p, &pr, &pi)) goto fail;
            const double t = tq_cli_now();
            if (c->verbosity >= 1) {
                printf("  sweep %5d: plaquette %.10f (spatial %.10f, temporal %.10f), Polyakov loop (%+.6f, %+.6f), "
                       "%.4f s per sweep\n", s, p->total, p->spatial, p->temporal, pr, pi, (t - t_last) / since);
                fflush(stdout);
            }
            t_last = t;
            since = 0;
        }
        if (maybe_checkpoint(c, o, s)) return 1;
    }
    return 0;
fail:
    fprintf(stderr, "%s: %s\n", c->me, tq_last_error());
    return 1;
}

/* The command line, the checkpoint to resume from (into m and h) and the outputs' checks.
 * Returns -1 to go on, else the exit code. */
static int prepare(int argc, char **argv, generate_opts *o, ckpt_meta *m, tq_host_gauge *h, const char *me)
{
    int rc = parse_generate_args(argc, argv, o);
    if (rc >= 0) return rc;
    const mode_t mask = umask(0);   /* read before the runtime's threads start */
    umask(mask);
    o->file_mode = 0666 & ~mask;
    memset(m, 0, sizeof *m);
    if (o->resume && (rc = load_checkpoint(o, m, h, me)) >= 0) return rc;
    for (int mu = 0; mu < 4; mu++)
        if (o->dims[mu] % 2) {
            fprintf(stderr, "%s: dimension %d is %d: the checkerboard sweep needs even extents\n", me, mu, o->dims[mu]);
            return 2;
        }
    return settle_outputs(o, me);
}

/* Writes the configuration to o->out: by parts on several ranks (each rank exports and
 * writes only its sites, no gathering; the generator's lattice says which), else by the one
 * rank. Every rank returns the same: 0, or 1 after saying why. *parts: whether
 * it wrote by parts. */
static int write_configuration(const generate_opts *o, tq_generator *g, tq_host_gauge *h, const tq_runtime_info *ri,
                               int *parts, const char *me)
{
    const tq_lattice *lat = ri->mpi_size > 1 ? tq_generator_lattice(g) : NULL;
    *parts = lat != NULL;
    if (!lat) {
        if (tq_generator_export(g, h)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return tq_cli_agree(me, 1); }
        return tq_cli_agree(me, ri->mpi_rank == 0 && tq_gauge_write(o->out, o->fmt, h, o->prec) ?
                                    (fprintf(stderr, "%s: %s\n", me, tq_last_error()), 1) : 0);
    }
    tq_lattice_info li;
    tq_host_gauge part = {{0}, NULL};
    int bad = tq_lattice_get_info(lat, &li) || tq_host_gauge_alloc(&part, li.local) || tq_generator_export(g, &part);
    if (bad) fprintf(stderr, "%s: %s\n", me, tq_last_error());
    /* the write is collective: every rank goes into it or none */
    const int agreed = tq_cli_agree(me, bad);
    if (agreed) {
        bad = agreed;
    } else if (tq_gauge_write_local(o->out, o->fmt, lat, &part, o->prec)) {
        fprintf(stderr, "%s: %s\n", me, tq_last_error());
        bad = 1;
    }
    tq_host_gauge_free(&part);
    return bad;
}

/* The generator with its starting links: the checkpoint's (h from prepare), hot or cold.
 * Returns 0, or 1 with the library's message set. */
static int start_generator(const generate_opts *o, const ckpt_meta *m, tq_host_gauge *h, tq_generator **g)
{
    if (tq_generator_create(o->dims, &o->gp, g)) return 1;
    if (o->resume) return tq_generator_import(*g, h) || tq_generator_set_sweeps(*g, m->sweeps);
    if (tq_host_gauge_alloc(h, o->dims)) return 1;
    return o->hot && (tq_host_gauge_random(h, o->gp.seed) || tq_generator_import(*g, h));
}

int tq_cmd_generate(int argc, char **argv)
{
    const char *me = "taskqcd generate";
    tq_init_params ip;
    tq_init_params_default(&ip);
    if (tq_init_params_from_args(&ip, &argc, argv)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return 2; }
    generate_opts o;
    ckpt_meta m;
    tq_host_gauge h = {{0}, NULL};
    int rc = prepare(argc, argv, &o, &m, &h, me);
    if (rc >= 0) { tq_host_gauge_free(&h); return rc; }
    const int init = tq_cli_init(me, &ip);
    if (init) { tq_host_gauge_free(&h); return init; }
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    /* auto: one kind of worker, so the configuration does not depend on which kind ran which
     * task (CPU and GPU arithmetic differ in the last bits) */
    const char *where = !strcmp(o.where, "auto") ? (ri.ncuda_workers > 0 ? "cuda" : "cpu") : o.where;
    tq_set_placement(!strcmp(where, "cpu") ? TQ_WHERE_CPU : !strcmp(where, "cuda") ? TQ_WHERE_CUDA : TQ_WHERE_ANY);
    if (o.resume && strcmp(m.where, where))
        fprintf(stderr, "%s: warning: the checkpoint was made with placement %s, this run's is %s: the result may differ "
                "in the last bits from the uninterrupted run's\n", me, m.where, where);
    const int *dims = o.dims;
    tq_generator *g = NULL;
    rc = 1;
    if (start_generator(&o, &m, &h, &g)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); goto done; }
    if (ip.verbosity >= 1) {
        printf("taskqcd generate: %dx%dx%dx%d, beta %g, %s start, seed %llu, %d sweeps of 1 heat bath + %d overrelaxation, "
               "%d blocks, where %s, %d CPU + %d CUDA workers\n", dims[0], dims[1], dims[2], dims[3], o.gp.beta,
               o.hot ? "hot" : "cold", (unsigned long long)o.gp.seed, o.sweeps, o.nor, tq_generator_slabs(g), where,
               ri.ncpu_workers, ri.ncuda_workers);
        if (o.resume) printf("  resumed from %s after sweep %llu\n", o.resume, m.sweeps);
    }
    const double t0 = tq_cli_now();
    tq_plaquette p = {1, 1, 1};
    const sweep_ctx c = {g, ri.mpi_rank, where, me, m.refused, &h, ip.verbosity, ri.mpi_size > 1 ? tq_generator_lattice(g) : NULL};
    const int swept = run_sweeps(&c, &o, (int)m.sweeps, &p);
    if (swept) goto done;
    if ((int)m.sweeps == o.sweeps && tq_generator_measure(g, &p, NULL, NULL)) {   /* no sweep ran */
        fprintf(stderr, "%s: %s\n", me, tq_last_error());
        goto done;
    }
    uint64_t refused = 0;
    if (tq_generator_refused(g, &refused)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); goto done; }
    if (refused + m.refused) fprintf(stderr, "%s: warning: %llu link updates found no positive weight (left unchanged)\n", me,
                                     (unsigned long long)refused + m.refused);
    int parts = 0;
    if (o.out && write_configuration(&o, g, &h, &ri, &parts, me)) goto done;
    if (ip.verbosity >= 1)
        printf("  %d sweeps in %.3f s; plaquette %.16g%s%s%s\n", o.sweeps - (int)m.sweeps, tq_cli_now() - t0, p.total,
               o.out ? ", written to " : "", o.out ? o.out : "", parts ? " (by parts, every rank its sites)" : "");
    rc = 0;
done:
    tq_host_gauge_free(&h);
    tq_generator_destroy(g);
    tq_finalize();
    return rc;
}
