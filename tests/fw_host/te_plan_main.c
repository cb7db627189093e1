/* te_plan_host IMAGE [REPEAT]: the sub-compaction plan of fw/lib/te_plan.c on the host, on a plan descriptor image
 * (PLAN_HEAD, as the host loads it at DDR_HOST_BASE for tables.elf), printing the lines the firmware prints
 * (fw/apps/tables/plan.c; fw_cycles=0). Built with ASan and UBSan by lsmc.sim.te_plan.host_exe(): a read
 * outside an index block stops it. Exit status as tables.elf's scenario (TABLES_*). With REPEAT (the build
 * without sanitizers, host_exe(timed=True)) the plan runs REPEAT times more and a last line gives its host time:
 * `tables: plan host_ns=N` (the mean, monotonic clock). */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lsmc_job.h"
#include "plan.h"

int main(int argc, char **argv)
{
    static uint32_t run_tables[TE_PLAN_MAX_RUNS];
    static te_plan_block blocks[PLAN_MAX_TABLES];
    te_plan_input in;
    te_plan_result res;
    uint8_t *img;
    void *work;
    long size;
    size_t need;
    uint32_t tables = 0;
    int rc;
    FILE *f;

    char *end = 0;
    long repeat = argc == 3 ? strtol(argv[2], &end, 10) : 0;
    if (argc < 2 || argc > 3 || (end && (end == argv[2] || *end)) || repeat < 0 || repeat > 1000000 ||
        !(f = fopen(argv[1], "rb"))) {
        fprintf(stderr, "usage: te_plan_host IMAGE [REPEAT]\n");
        return 2;
    }
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    img = malloc(size ? (size_t)size : 1);
    if (!img || fread(img, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "te_plan_host: cannot read %s\n", argv[1]);
        return 2;
    }
    fclose(f);
    if (plan_from_image(img, (uint32_t)size, &in, run_tables, blocks) != 0)
        return free(img), TABLES_BAD_DESC;
    for (uint32_t r = 0; r < in.runs; r++)
        tables += run_tables[r];
    for (uint32_t i = 0; i < tables; i++) { /* each block alone, so ASan sees a read past its end */
        uint8_t *b = malloc(blocks[i].len ? blocks[i].len : 1);
        memcpy(b, blocks[i].data, blocks[i].len);
        blocks[i].data = b;
    }
    /* exactly the bytes asked for, so ASan sees a write past them */
    need = te_plan_work_bytes(in.runs, tables, in.parts);
    work = malloc(need);
    rc = plan_print(te_plan(&in, work, need, &res), &res, tables, 0);
    if (repeat > 0 && rc == TABLES_PASS) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long i = 0; i < repeat; i++)
            te_plan(&in, work, need, &res);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("tables: plan host_ns=%.0f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / repeat);
    }
    for (uint32_t i = 0; i < tables; i++)
        free((void *)blocks[i].data);
    free(work);
    free(img);
    return rc;
}
