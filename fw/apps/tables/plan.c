#include "plan.h"

#include <stdio.h>

#include "lsmc_job.h"

int plan_from_image(const uint8_t *img, uint32_t size, te_plan_input *in, uint32_t *run_tables,
                    te_plan_block *blocks)
{
    const uint32_t *w = (const uint32_t *)(const void *)img;
    uint32_t runs, tables, prev = 0;

    if (size < 4 * PLAN_HEAD_NWORDS || w[PLAN_HEAD_MAGIC] != PLAN_MAGIC || w[PLAN_HEAD_VERSION] != PLAN_VERSION) {
        printf("tables: plan bad descriptor: no PLAN_MAGIC version %u head\n", (unsigned)PLAN_VERSION);
        return -1;
    }
    runs = w[PLAN_HEAD_RUNS];
    tables = w[PLAN_HEAD_TABLES];
    if (runs < 1 || runs > TE_PLAN_MAX_RUNS || tables > PLAN_MAX_TABLES ||
        w[PLAN_HEAD_PARTS] < 2 || w[PLAN_HEAD_PARTS] > TE_PLAN_MAX_PARTS ||
        4 * (PLAN_HEAD_NWORDS + PLAN_TABLE_NWORDS * tables) > size) {
        printf("tables: plan bad descriptor: runs %lu (1..%u), parts %lu (2..%u), tables %lu (0..%u)\n",
               (unsigned long)runs, (unsigned)TE_PLAN_MAX_RUNS, (unsigned long)w[PLAN_HEAD_PARTS],
               (unsigned)TE_PLAN_MAX_PARTS, (unsigned long)tables, (unsigned)PLAN_MAX_TABLES);
        return -1;
    }
    for (uint32_t r = 0; r < runs; r++)
        run_tables[r] = 0;
    for (uint32_t i = 0; i < tables; i++) {
        const uint32_t *t = w + PLAN_HEAD_NWORDS + PLAN_TABLE_NWORDS * i;
        uint32_t run = t[PLAN_TABLE_RUN], off = t[PLAN_TABLE_OFF], len = t[PLAN_TABLE_LEN];
        if (run >= runs || run < prev || off > size || len > size - off) {
            printf("tables: plan bad descriptor: table %lu (run %lu, %lu bytes at %lu) out of order or outside "
                   "the %lu bytes\n", (unsigned long)i, (unsigned long)run, (unsigned long)len, (unsigned long)off,
                   (unsigned long)size);
            return -1;
        }
        prev = run;
        run_tables[run]++;
        blocks[i].data = img + off;
        blocks[i].len = len;
    }
    in->runs = runs;
    in->parts = w[PLAN_HEAD_PARTS];
    in->run_tables = run_tables;
    in->index = blocks;
    return 0;
}

const char *plan_u64(uint64_t v, char *buf)
{
    char *p = buf + 20;
    *p = 0;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

static void print_key(te_plan_key k)
{
    for (uint32_t i = 0; i < k.len; i++)
        printf("%02x", k.key[i]);
}

int plan_print(int rc, const te_plan_result *res, uint32_t tables, uint64_t fw_cycles)
{
    const te_plan_stats *s = &res->stats;
    char b1[21], b2[21];
    if (rc == TE_PLAN_E_BLOCK) {
        printf("tables: plan error=%s run=%lu table=%lu offset=%lu\n", te_plan_err_name(res->err.code),
               (unsigned long)res->err.run, (unsigned long)res->err.table, (unsigned long)res->err.offset);
        return TABLES_BAD_INDEX;
    }
    if (rc != TE_PLAN_OK) {
        printf("tables: plan refused: %s\n", rc == TE_PLAN_E_SPACE ? "work space too small" : "runs or parts out of range");
        return TABLES_BAD_DESC;
    }
    printf("tables: plan parts=%lu runs=%lu tables=%lu splits=%lu fw_cycles=%s total_bytes=%s index_entries=%lu "
           "comparisons=%lu compared_bytes=%lu checks=%lu\n", (unsigned long)res->parts, (unsigned long)res->runs,
           (unsigned long)tables, (unsigned long)res->nsplits, plan_u64(fw_cycles, b1),
           plan_u64(res->total_bytes, b2), (unsigned long)s->index_entries, (unsigned long)s->comparisons,
           (unsigned long)s->compared_bytes, (unsigned long)s->checks);
    for (uint32_t i = 0; i < res->nsplits; i++) {
        printf("tables: plan split=%lu key=", (unsigned long)i);
        print_key(res->splits[i]);
        printf("\n");
    }
    for (uint32_t j = 0; j < res->parts; j++) {
        printf("tables: plan part=%lu bytes=%s windows=%lu\n", (unsigned long)j, plan_u64(res->part_bytes[j], b1), (unsigned long)res->nwindows[j]);
        for (uint32_t i = 0; i < res->nwindows[j]; i++) {
            const te_plan_window *w = &res->windows[j * res->runs + i];
            printf("tables: plan window part=%lu run=%lu tables=%lu-%lu blocks=%lu-%lu lo_blocks=%lu hi_from=%lu "
                   "bytes=%s\n", (unsigned long)j, (unsigned long)w->run, (unsigned long)w->first_table,
                   (unsigned long)w->last_table, (unsigned long)w->first_block, (unsigned long)w->last_block,
                   (unsigned long)w->lo_blocks, (unsigned long)w->hi_from, plan_u64(w->bytes, b1));
        }
    }
    return TABLES_PASS;
}
