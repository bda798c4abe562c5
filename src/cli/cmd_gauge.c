/* taskqcd gauge: inspect, convert and generate gauge-configuration files (host only, no
 * StarPU). */
#include "cli.h"
#include "taskqcd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
        "usage: taskqcd gauge info FILE [--format F]\n"
        "       taskqcd gauge convert IN OUT --format F [--in-format F] [--precision 4|8]\n"
        "       taskqcd gauge generate --dim X Y Z T --type unit|random|weak [--seed S]\n"
        "                              [--epsilon E] --out FILE [--format F] [--precision 4|8]\n"
        "\n"
        "formats: milc, scidac, ildg, nersc (and auto for reading, the default)\n"
        "  --precision: bytes per real in the written file; default: the input's for convert,\n"
        "  8 for generate; MILC files are always 4\n"
        "  convert to a higher precision (4 -> 8) reunitarises every link (projects it onto\n"
        "  SU(3) in double), so that the file passes a double-precision unitarity check; the\n"
        "  plaquette changes at the single-precision level. Otherwise links are copied as read.\n");
}

static int fail(void)
{
    fprintf(stderr, "taskqcd gauge: %s\n", tq_last_error());
    return 1;
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "taskqcd gauge: ");
    fprintf(stderr, fmt, arg);
    fputs("\n\n", stderr);
    usage(stderr);
    return 2;
}

static int parse_format(const char *s, tq_gauge_format *f)
{
    if (tq_gauge_format_parse(s, f) != TQ_SUCCESS) return usage_error("%s", tq_last_error());
    return 0;
}

static int parse_precision(const char *s, int *prec)
{
    if (!strcmp(s, "4") || !strcmp(s, "single")) { *prec = 4; return 0; }
    if (!strcmp(s, "8") || !strcmp(s, "double")) { *prec = 8; return 0; }
    return usage_error("--precision must be 4 or 8, not '%s'", s);
}

static int cmd_info(int argc, char **argv)
{
    const char *path = NULL;
    tq_gauge_format fmt = TQ_FORMAT_AUTO;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--format")) {
            if (++i >= argc) return usage_error("%s needs a value", "--format");
            if (parse_format(argv[i], &fmt)) return 2;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return usage_error("unknown option '%s'", argv[i]);
        } else if (!path) {
            path = argv[i];
        } else {
            return usage_error("unexpected argument '%s'", argv[i]);
        }
    }
    if (!path) return usage_error("%s", "info needs a FILE");

    tq_host_gauge g;
    tq_gauge_file_info info;
    if (tq_gauge_read(path, fmt, &g, &info)) return fail();
    tq_plaquette p;
    double trace, dev;
    if (tq_host_gauge_plaquette(&g, &p) || tq_host_gauge_link_trace(&g, &trace) ||
        tq_host_gauge_unitarity(&g, &dev)) {
        tq_host_gauge_free(&g);
        return fail();
    }
    printf("file:           %s\n", path);
    printf("format:         %s\n", tq_gauge_format_name(info.format));
    printf("dims:           %d %d %d %d\n", info.dims[0], info.dims[1], info.dims[2], info.dims[3]);
    printf("file precision: %d (%s)\n", info.file_precision, info.file_precision == 8 ? "double" : "single");
    if (!info.has_checksum)
        printf("checksum:       none in the file\n");
    else if (info.format == TQ_FORMAT_NERSC)
        printf("checksum:       NERSC %x (verified)\n", info.nersc_checksum);
    else
        printf("checksums:      %s %x %x (verified)\n", info.format == TQ_FORMAT_MILC ? "MILC" : "SciDAC",
               info.checksum_a, info.checksum_b);
    printf("plaquette:      spatial %.16g temporal %.16g total %.16g (Re Tr / 3, unit = 1)\n",
           p.spatial, p.temporal, p.total);
    printf("plaquette MILC: ss %.16g st %.16g (Re Tr, unit = 3)\n", 3 * p.spatial, 3 * p.temporal);
    printf("link trace:     %.10g (Re Tr U / 3)\n", trace);
    printf("unitarity:      max deviation %.3g\n", dev);
    tq_host_gauge_free(&g);
    return 0;
}

static int cmd_convert(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    tq_gauge_format in_fmt = TQ_FORMAT_AUTO, out_fmt = TQ_FORMAT_AUTO;
    int have_out_fmt = 0, prec = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--format") || !strcmp(argv[i], "--in-format") || !strcmp(argv[i], "--precision")) {
            if (i + 1 >= argc) return usage_error("%s needs a value", argv[i]);
            const char *opt = argv[i++];
            if (!strcmp(opt, "--format")) {
                if (parse_format(argv[i], &out_fmt)) return 2;
                have_out_fmt = 1;
            } else if (!strcmp(opt, "--in-format")) {
                if (parse_format(argv[i], &in_fmt)) return 2;
            } else if (parse_precision(argv[i], &prec)) {
                return 2;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return usage_error("unknown option '%s'", argv[i]);
        } else if (!in) {
            in = argv[i];
        } else if (!out) {
            out = argv[i];
        } else {
            return usage_error("unexpected argument '%s'", argv[i]);
        }
    }
    if (!in || !out) return usage_error("%s", "convert needs IN and OUT");
    if (!have_out_fmt || out_fmt == TQ_FORMAT_AUTO)
        return usage_error("%s", "convert needs --format milc|scidac|ildg|nersc for OUT");

    tq_host_gauge g;
    tq_gauge_file_info info;
    if (tq_gauge_read(in, in_fmt, &g, &info)) return fail();
    if (!prec) prec = out_fmt == TQ_FORMAT_MILC ? 4 : info.file_precision;
    /* Single-precision links are unitary only to about 1e-7; written as doubles they would
     * fail the 1e-12 check every reader of a double file (ours included) is entitled to
     * make. Project them back onto SU(3) so the file is what it claims to be. */
    double before = 0, after = 0;
    int reunit = prec > info.file_precision;
    tq_status s = TQ_SUCCESS;
    if (reunit) s = tq_host_gauge_unitarity(&g, &before);
    if (!s && reunit) s = tq_host_gauge_reunitarize(&g);
    if (!s && reunit) s = tq_host_gauge_unitarity(&g, &after);
    if (!s) s = tq_gauge_write(out, out_fmt, &g, prec);
    tq_host_gauge_free(&g);
    if (s) return fail();
    if (reunit)
        printf("links reunitarised for the higher precision: max deviation from SU(3) %.3g -> %.3g\n",
               before, after);
    printf("%s (%s, %d-byte reals) -> %s (%s, %d-byte reals)\n", in, tq_gauge_format_name(info.format),
           info.file_precision, out, tq_gauge_format_name(out_fmt), prec);
    return 0;
}

static int cmd_generate(int argc, char **argv)
{
    int dims[4] = {0, 0, 0, 0}, have_dims = 0, prec = 0;
    const char *type = NULL, *out = NULL;
    unsigned long long seed = 1;
    double epsilon = 0.1;
    tq_gauge_format fmt = TQ_FORMAT_SCIDAC;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--dim")) {
            if (tq_cli_parse_dims(argc, argv, &i, dims)) return usage_error("%s needs four positive extents", a);
            have_dims = 1;
            continue;
        }
        if (!strcmp(a, "--type") || !strcmp(a, "--seed") || !strcmp(a, "--epsilon") ||
            !strcmp(a, "--out") || !strcmp(a, "--format") || !strcmp(a, "--precision")) {
            if (i + 1 >= argc) return usage_error("%s needs a value", a);
            const char *v = argv[++i];
            char *end;
            if (!strcmp(a, "--type")) type = v;
            else if (!strcmp(a, "--out")) out = v;
            else if (!strcmp(a, "--format")) { if (parse_format(v, &fmt)) return 2; }
            else if (!strcmp(a, "--precision")) { if (parse_precision(v, &prec)) return 2; }
            else if (!strcmp(a, "--seed")) {
                seed = strtoull(v, &end, 0);
                if (*end || !*v || v[0] == '-') return usage_error("bad --seed '%s'", v);
            } else {
                epsilon = strtod(v, &end);
                if (*end || !*v || !(epsilon >= 0)) return usage_error("bad --epsilon '%s'", v);
            }
            continue;
        }
        return usage_error("unexpected argument '%s'", a);
    }
    if (!have_dims) return usage_error("%s", "generate needs --dim X Y Z T");
    if (!type) return usage_error("%s", "generate needs --type unit|random|weak");
    if (strcmp(type, "unit") && strcmp(type, "random") && strcmp(type, "weak"))
        return usage_error("unknown --type '%s' (unit, random, weak)", type);
    if (!out) return usage_error("%s", "generate needs --out FILE");
    if (fmt == TQ_FORMAT_AUTO) return usage_error("%s", "--format auto cannot be written");
    if (!prec) prec = fmt == TQ_FORMAT_MILC ? 4 : 8;

    tq_host_gauge g;
    if (tq_host_gauge_alloc(&g, dims)) return fail();
    tq_status s;
    if (!strcmp(type, "unit")) s = tq_host_gauge_unit(&g);
    else if (!strcmp(type, "random")) s = tq_host_gauge_random(&g, (uint64_t)seed);
    else s = tq_host_gauge_weak(&g, (uint64_t)seed, epsilon);
    tq_plaquette p = {0, 0, 0};
    if (!s) s = tq_host_gauge_plaquette(&g, &p);
    if (!s) s = tq_gauge_write(out, fmt, &g, prec);
    tq_host_gauge_free(&g);
    if (s) return fail();
    printf("%s: %s %d %d %d %d, %s, %d-byte reals, plaquette %.16g\n", out, type, dims[0], dims[1],
           dims[2], dims[3], tq_gauge_format_name(fmt), prec, p.total);
    return 0;
}

int tq_cmd_gauge(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
        usage(stdout);
        return 0;
    }
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
    if (!strcmp(sub, "info")) return cmd_info(argc - 1, argv + 1);
    if (!strcmp(sub, "convert")) return cmd_convert(argc - 1, argv + 1);
    if (!strcmp(sub, "generate")) return cmd_generate(argc - 1, argv + 1);
    return usage_error("unknown gauge subcommand '%s' (info, convert, generate)", sub);
}
