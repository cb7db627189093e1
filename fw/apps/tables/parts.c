#include "parts.h"

#include <stdio.h>
#include <string.h>

#include "csr.h"
#include "lsmc_job.h"
#include "plan.h"
#include "soc.h"
#include "table_engine.h"
#include "te_parts.h"
#include "te_plan.h"
#include "timer.h"

#define FOOTER_BYTES 48 /* LevelDB's Footer::kEncodedLength */
#define TRAILER_BYTES 5 /* a block's type byte and masked CRC */
#define LOAD_KEYS 0     /* TE_LOAD targets (doc/table_engine_top.md, "The walker's load") */
#define LOAD_LEVELS 3
#define LOAD_GP_COUNT 6
#define LOAD_BOUND 7
#define BEAT 16 /* TE_LOAD's data: the engine's beat */

typedef volatile uint32_t *ddr_words;

static ddr_words words(uint32_t addr) { return (ddr_words)(uintptr_t)addr; }

/* One varint64 of LevelDB's coding from p (at most `n` bytes); bytes read, 0 when it does not end in them. */
static uint32_t varint(const uint8_t *p, uint32_t n, uint64_t *v)
{
    *v = 0;
    for (uint32_t i = 0; i < n && i < 10; i++) {
        *v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80))
            return i + 1;
    }
    return 0;
}

/* The index block of the table at `base` (`size` bytes) from its footer: 0, or prints why not and returns -1. */
static int index_block(uint32_t run, uint32_t table, uint32_t base, uint32_t size, te_plan_block *b)
{
    const uint8_t *t = (const uint8_t *)(uintptr_t)base, *f = t + size - FOOTER_BYTES;
    uint64_t v[4];
    uint32_t at = 0, n;
    if (size < FOOTER_BYTES) {
        printf("tables: parts error=BAD_FOOTER run=%lu table=%lu: %lu bytes, no footer\n", (unsigned long)run,
               (unsigned long)table, (unsigned long)size);
        return -1;
    }
    for (int i = 0; i < 4; i++) { /* the metaindex handle, then the index block's */
        n = varint(f + at, FOOTER_BYTES - 8 - at, &v[i]);
        if (!n)
            break;
        at += n;
    }
    if (!n || v[2] + v[3] + TRAILER_BYTES > size - FOOTER_BYTES) {
        printf("tables: parts error=BAD_FOOTER run=%lu table=%lu: index handle outside the table\n",
               (unsigned long)run, (unsigned long)table);
        return -1;
    }
    if (t[v[2] + v[3]] != 0) {
        printf("tables: parts error=BAD_INDEX run=%lu table=%lu: a compressed index block (the firmware plans on raw "
               "ones only)\n", (unsigned long)run, (unsigned long)table);
        return -1;
    }
    b->data = t + v[2];
    b->len = (uint32_t)v[3];
    return 0;
}

static void print_bound(const char *name, int has, te_plan_key k)
{
    printf(" %s=", name);
    if (!has) {
        printf("null");
        return;
    }
    for (uint32_t i = 0; i < k.len; i++)
        printf("%02x", k.key[i]);
}

/* Bump allocation in DDR_SCRATCH; 0 when it is full. */
static uint32_t scratch_at = DDR_SCRATCH_BASE;
static uint32_t scratch(uint32_t bytes, uint32_t align)
{
    uint32_t a = (scratch_at + align - 1) / align * align;
    if (a + bytes > DDR_SCRATCH_BASE + DDR_SCRATCH_SIZE || a + bytes < a)
        return 0;
    scratch_at = a + bytes;
    return a;
}

/* A key's words into the range-key RAM as KEYS records from `word` (an empty key: one word), then its BOUND
 * record (`which` 0 lo, 1 hi), as dv/walker_loads.h lays them out; records written, from `rec`. */
static uint32_t put_bound(ddr_words rec, uint32_t *word, uint32_t which, te_plan_key k)
{
    uint32_t n = 0, at = *word;
    for (uint32_t p = 0; p < k.len || (p == 0 && k.len == 0); p += BEAT, n++) {
        ddr_words r = rec + n * TE_LOAD_NWORDS;
        uint8_t beat[BEAT] = {0};
        uint32_t w4[BEAT / 4];
        if (p < k.len)
            memcpy(beat, k.key + p, k.len - p < BEAT ? k.len - p : BEAT);
        memcpy(w4, beat, BEAT);
        r[TE_LOAD_TARGET] = LOAD_KEYS;
        r[TE_LOAD_ADDR] = (*word)++;
        r[TE_LOAD_PAD] = r[TE_LOAD_PAD + 1] = 0;
        for (int i = 0; i < BEAT / 4; i++)
            r[TE_LOAD_DATA + i] = w4[i];
        if (k.len == 0) {
            n++;
            break;
        }
    }
    ddr_words r = rec + n * TE_LOAD_NWORDS;
    r[TE_LOAD_TARGET] = LOAD_BOUND;
    r[TE_LOAD_ADDR] = which;
    r[TE_LOAD_PAD] = r[TE_LOAD_PAD + 1] = 0;
    r[TE_LOAD_DATA] = at | k.len << 16;
    r[TE_LOAD_DATA + 1] = r[TE_LOAD_DATA + 2] = r[TE_LOAD_DATA + 3] = 0;
    return n + 1;
}

/* One part as dispatched: its descriptor (0: an empty part, not dispatched) and its (lo, hi] bounds. */
typedef struct {
    uint32_t desc;
    int has_lo, has_hi;
    te_plan_key lo, hi;
} part_job;

static int in_region(uint32_t addr, uint32_t bytes, uint32_t base, uint32_t size)
{
    return addr >= base && bytes <= size && addr - base <= size - bytes;
}

static int in_host(uint32_t addr, uint32_t bytes)
{
    return in_region(addr, bytes, DDR_HOST_BASE, DDR_HOST_SIZE);
}

/* Part j's TE_OUT records (its unit's result area, `r->tables_out` of them) after the `*gathered` already in `job`'s
 * result area: TABLES_PASS, or prints why not. */
static int gather_part(uint32_t j, uint32_t desc, const te_result *r, ddr_words job, uint32_t *gathered)
{
    ddr_words to = words(job[TE_DESC_RESULT_ADDR]), from = words(words(desc)[TE_DESC_RESULT_ADDR]);
    const uint32_t bytes = 4 * TE_OUT_NWORDS * r->tables_out;

    if (4 * TE_OUT_NWORDS * (*gathered + r->tables_out) > job[TE_DESC_RESULT_BYTES]) {
        printf("tables: parts: %lu output tables overflow the host's result area of %lu bytes\n",
               (unsigned long)(*gathered + r->tables_out), (unsigned long)job[TE_DESC_RESULT_BYTES]);
        return TABLES_FAILED;
    }
    /* the host's parts keep theirs in DDR_HOST, the firmware's own in DDR_SCRATCH */
    if (!in_host((uint32_t)(uintptr_t)from, bytes) &&
        !in_region((uint32_t)(uintptr_t)from, bytes, DDR_SCRATCH_BASE, DDR_SCRATCH_SIZE)) {
        printf("tables: parts: part %lu's result area 0x%08lx is outside DDR_HOST and DDR_SCRATCH\n",
               (unsigned long)j, (unsigned long)(uintptr_t)from);
        return TABLES_BAD_DESC;
    }
    if (from != to + TE_OUT_NWORDS * *gathered) /* one part whole: its records are already in place */
        for (uint32_t i = 0; i < TE_OUT_NWORDS * r->tables_out; i++)
            to[TE_OUT_NWORDS * *gathered + i] = from[i];
    *gathered += r->tables_out;
    return TABLES_PASS;
}

/* Runs the parts that have a descriptor one a unit side by side, gathers their TE_OUT records into `job`'s result area
 * in part order and prints the lines the host parses; `t0` the job's start, `t_plan` its dispatch (timer). A part's
 * records are gathered as soon as it and the parts before it have ended, while later parts still run; the units'
 * counters are read once the records are in place (they only feed the lines printed). */
static int run_parts(uint32_t P, const part_job *pj, ddr_words job, uint64_t t0, uint64_t t_plan)
{
    static uint32_t desc[TE_UNITS_MAX], part_unit[TE_PLAN_MAX_PARTS];
    static te_result res[TE_UNITS_MAX];
    te_batch batch;
    uint64_t t_done, t_end;
    uint32_t units = 0, gathered = 0, in_total = 0, out_total = 0, dropped = 0, bytes_total = 0, bracket = 0, engine = 0;
    uint32_t ended = 0, next = 0;
    int rc, unit, gerr = TABLES_PASS, stop = 0;
    char b1[21], b2[21], b3[21], b4[21];

    for (uint32_t j = 0; j < P; j++) {
        part_unit[j] = pj[j].desc ? units : TE_UNITS_MAX;
        if (pj[j].desc)
            desc[units++] = pj[j].desc;
    }
    /* Polled, not by interrupt: a unit's STATUS read about 100 clocks after it ends against about 900 through the
     * interrupt (trap, IRQ controller, handler; measured on tables-m4, doc/table_engine_soc.md), and arming is two
     * register writes a unit instead of four; the CPU has nothing else to do meanwhile. */
    rc = te_start_all(units, desc, 0, 0, &batch, res);
    t_done = timer_now();
    /* Every unit is waited for, whatever a part's records say: none is left running when the job is reported. */
    while (rc == TE_OK && (unit = te_wait_next(&batch, res)) >= 0) {
        t_done = timer_now();
        ended |= 1u << unit;
        for (; next < P && !stop; next++) { /* the parts in order whose units (if any) have ended */
            if (part_unit[next] == TE_UNITS_MAX)
                continue;
            if (!(ended & (1u << part_unit[next])))
                break;
            if (res[part_unit[next]].rc != TE_OK) { /* reported below */
                stop = 1;
                break;
            }
            gerr = gather_part(next, desc[part_unit[next]], &res[part_unit[next]], job, &gathered);
            stop = gerr != TABLES_PASS;
        }
    }
    if (rc == TE_OK)
        mem_fence();
    t_end = timer_now();
    if (gerr != TABLES_PASS) /* a part before any failing one: its message printed */
        return gerr;
    for (uint32_t v = 0; rc == TE_OK && v < units; v++) {
        te_result *r = &res[v];
        te_read_counters(v, r);
        in_total += r->entries_in, out_total += r->entries_out, dropped += r->dropped;
        bytes_total += r->bytes_out;
        bracket = r->cycles > bracket ? r->cycles : bracket;
        engine = r->engine_cycles > engine ? r->engine_cycles : engine;
    }

    for (uint32_t u = 0; u < units; u++) {
        const te_result *r = &res[u];
        uint32_t j = 0;
        while (j < P && part_unit[j] != u)
            j++;
        if (r->rc == TE_E_UNIT) {
            printf("tables: error=%s unit=%s run=%lu table=%lu offset=%lu entry=%lu cycles=%lu part=%lu\n",
                   te_err_name(r->code), te_unit_name(r->unit), (unsigned long)r->run, (unsigned long)r->table,
                   (unsigned long)r->offset, (unsigned long)r->entry, (unsigned long)r->cycles, (unsigned long)j);
            return TABLES_FAILED;
        }
        if (r->rc != TE_OK) {
            printf("tables: part %lu on unit %lu: %s (STATUS 0x%08lx)\n", (unsigned long)j, (unsigned long)u,
                   r->rc == TE_E_TIMEOUT ? "timeout" : "not started", (unsigned long)r->status);
            return r->rc == TE_E_TIMEOUT ? TABLES_TIMEOUT : TABLES_FAILED;
        }
    }
    if (rc != TE_OK) {
        printf("tables: parts not started (driver %d)\n", rc);
        return TABLES_FAILED;
    }
    printf("tables: parts=%lu units=%lu plan_cycles=%s dispatch_wait_cycles=%s collect_cycles=%s job_cycles=%s\n",
           (unsigned long)P, (unsigned long)units, plan_u64(t_plan - t0, b1), plan_u64(t_done - t_plan, b2),
           plan_u64(t_end - t_done, b3), plan_u64(t_end - t0, b4));
    for (uint32_t j = 0; j < P; j++) {
        const te_result *r = part_unit[j] < units ? &res[part_unit[j]] : 0;
        printf("tables: part=%lu", (unsigned long)j);
        print_bound("lo", pj[j].has_lo, pj[j].lo);
        print_bound("hi", pj[j].has_hi, pj[j].hi);
        printf(" unit=%ld tables_out=%lu entries_in=%lu entries_out=%lu dropped=%lu bytes_out=%lu cycles=%lu "
               "engine_cycles=%lu fw_cycles=%s\n", r ? (long)part_unit[j] : -1L, r ? (unsigned long)r->tables_out : 0ul,
               r ? (unsigned long)r->entries_in : 0ul, r ? (unsigned long)r->entries_out : 0ul,
               r ? (unsigned long)r->dropped : 0ul, r ? (unsigned long)r->bytes_out : 0ul,
               r ? (unsigned long)r->cycles : 0ul, r ? (unsigned long)r->engine_cycles : 0ul,
               plan_u64(r ? r->fw_cycles : 0, b1));
    }
    printf("tables: done cycles=%lu engine_cycles=%lu fw_cycles=%s entries_in=%lu entries_out=%lu dropped=%lu "
           "tables_out=%lu bytes_out=%lu\n", (unsigned long)bracket, (unsigned long)engine, plan_u64(t_end - t0, b1),
           (unsigned long)in_total, (unsigned long)out_total, (unsigned long)dropped, (unsigned long)gathered,
           (unsigned long)bytes_total);
    return TABLES_PASS;
}

/* `P` parts need P units: TABLES_PASS, or prints why not. */
static int units_for(uint32_t P)
{
    if (P < 1 || P > TE_UNITS_MAX) {
        printf("tables: parts %lu: 1..%u (one a unit)\n", (unsigned long)P, (unsigned)TE_UNITS_MAX);
        return TABLES_BAD_DESC;
    }
    /* The SoC numbers its units from 0 without gaps: the last one answering is enough (an APB read is about 70
     * clocks); te_start_all checks each unit again before it starts any. */
    if (te_present(P - 1, 0))
        return TABLES_PASS;
    for (uint32_t u = 0; u < P; u++)
        if (!te_present(u, 0)) {
            printf("tables: %lu parts need %lu table-engine units; this SoC build has %lu\n", (unsigned long)P,
                   (unsigned long)P, (unsigned long)u);
            return TABLES_ABSENT;
        }
    return TABLES_PASS;
}

int parts_run(uint32_t P, void *work, size_t work_bytes)
{
    static uint32_t run_tables[TE_PLAN_MAX_RUNS];
    static te_plan_block blocks[PLAN_MAX_TABLES];
    static part_job pj[TE_PLAN_MAX_PARTS];
    ddr_words host = words(DDR_HOST_BASE);
    te_plan_input in;
    te_plan_result plan;
    uint64_t t0, part_sum = 0;
    uint32_t runs, tables = 0, nloads, key_words = 0, out_at;
    int rc;

    if ((rc = units_for(P)) != TABLES_PASS)
        return rc;
    runs = host[TE_DESC_RUNS];
    if (host[TE_DESC_MAGIC] != TE_MAGIC || host[TE_DESC_VERSION] != TE_VERSION || runs < 1 || runs > 8 ||
        host[TE_DESC_LOADS_COUNT] < 2) {
        printf("tables: parts bad descriptor at 0x%08lx: no TE_MAGIC version %u head with 1..8 runs and a load\n",
               (unsigned long)DDR_HOST_BASE, (unsigned)TE_VERSION);
        return TABLES_BAD_DESC;
    }
    t0 = timer_now();
    if (P == 1) { /* the job whole: nothing to plan, its records already where the host reads them */
        memset(&pj[0], 0, sizeof pj[0]);
        pj[0].desc = DDR_HOST_BASE;
        return run_parts(1, pj, host, t0, timer_now());
    }

    /* The plan on the index blocks where the host's tables lie. */
    for (uint32_t r = 0; r < runs; r++) {
        ddr_words list = words(host[TE_DESC_TABLES_ADDR + r]);
        run_tables[r] = host[TE_DESC_TABLES_COUNT + r];
        if (tables + run_tables[r] > PLAN_MAX_TABLES) {
            printf("tables: parts bad descriptor: over %u tables\n", (unsigned)PLAN_MAX_TABLES);
            return TABLES_BAD_DESC;
        }
        for (uint32_t i = 0; i < run_tables[r]; i++, tables++)
            if (index_block(r, i, list[TE_TABLE_NWORDS * i + TE_TABLE_BASE], list[TE_TABLE_NWORDS * i + TE_TABLE_SIZE],
                            &blocks[tables]) != 0)
                return TABLES_BAD_INDEX;
    }
    in.runs = runs;
    in.run_tables = run_tables;
    in.index = blocks;
    in.parts = P;
    rc = te_plan(&in, work, work_bytes, &plan);
    if (rc != TE_PLAN_OK)
        return plan_print(rc, &plan, tables, 0);

    /* One descriptor a part with windows; the parts past the splits read nothing and are not dispatched. */
    nloads = host[TE_DESC_LOADS_COUNT];
    {
        ddr_words loads = words(host[TE_DESC_LOADS_ADDR]);
        if (loads[(nloads - 2) * TE_LOAD_NWORDS + TE_LOAD_TARGET] != LOAD_GP_COUNT ||
            loads[(nloads - 1) * TE_LOAD_NWORDS + TE_LOAD_TARGET] != LOAD_LEVELS) {
            printf("tables: parts bad descriptor: the walker load does not end with GP_COUNT and LEVELS\n");
            return TABLES_BAD_DESC;
        }
        for (uint32_t i = 0; i < nloads; i++)
            if (loads[i * TE_LOAD_NWORDS + TE_LOAD_TARGET] == LOAD_KEYS &&
                loads[i * TE_LOAD_NWORDS + TE_LOAD_ADDR] >= key_words)
                key_words = loads[i * TE_LOAD_NWORDS + TE_LOAD_ADDR] + 1;
    }
    for (uint32_t j = 0; j < plan.parts; j++)
        if (plan.nwindows[j])
            part_sum += te_part_weight(plan.part_bytes[j]);
    scratch_at = DDR_SCRATCH_BASE;
    out_at = host[TE_DESC_OUT_BASE];
    for (uint32_t j = 0; j < plan.parts; j++) {
        const uint32_t nw = plan.nwindows[j];
        const int has_lo = j > 0 && j <= plan.nsplits, has_hi = j < plan.nsplits;
        uint32_t d, lists, loads, result, nrec = 0, word = key_words, bound_words = 0;
        ddr_words dw, hl = words(host[TE_DESC_LOADS_ADDR]);
        pj[j].desc = 0;
        pj[j].has_lo = has_lo, pj[j].has_hi = has_hi;
        if (has_lo)
            pj[j].lo = plan.splits[j - 1];
        if (has_hi)
            pj[j].hi = plan.splits[j];
        if (!nw)
            continue;
        if (has_lo)
            bound_words += plan.splits[j - 1].len / BEAT + 2;
        if (has_hi)
            bound_words += plan.splits[j].len / BEAT + 2;
        d = scratch(4 * TE_DESC_NWORDS, TE_DESC_ALIGN);
        result = scratch(host[TE_DESC_RESULT_BYTES], TE_OUT_ALIGN);
        loads = scratch(4 * TE_LOAD_NWORDS * (nloads + bound_words), TE_LOAD_ALIGN);
        lists = scratch(4 * TE_TABLE_NWORDS * tables, TE_TABLE_ALIGN);
        if (!d || !result || !loads || !lists) {
            printf("tables: parts: part %lu's descriptor does not fit in DDR_SCRATCH\n", (unsigned long)j);
            return TABLES_BAD_DESC;
        }
        dw = words(d);
        for (uint32_t i = 0; i < TE_DESC_NWORDS; i++)
            dw[i] = i >= TE_DESC_TABLES_ADDR ? 0 : host[i];
        /* the part's tables, each run's window: first_block in its first table, up to last_block in its last */
        for (uint32_t i = 0; i < nw; i++) {
            const te_plan_window *w = &plan.windows[j * plan.runs + i];
            ddr_words from = words(host[TE_DESC_TABLES_ADDR + w->run]), to = words(lists);
            dw[TE_DESC_TABLES_ADDR + i] = lists;
            dw[TE_DESC_TABLES_COUNT + i] = w->last_table - w->first_table + 1;
            for (uint32_t t = w->first_table; t <= w->last_table; t++, to += TE_TABLE_NWORDS) {
                to[TE_TABLE_BASE] = from[TE_TABLE_NWORDS * t + TE_TABLE_BASE];
                to[TE_TABLE_SIZE] = from[TE_TABLE_NWORDS * t + TE_TABLE_SIZE];
                to[TE_TABLE_FIRST_BLOCK] = t == w->first_table ? w->first_block : 0;
                to[TE_TABLE_END_BLOCK] = t == w->last_table ? w->last_block + 1 : 0;
            }
            lists += 4 * TE_TABLE_NWORDS * dw[TE_DESC_TABLES_COUNT + i];
        }
        dw[TE_DESC_RUNS] = nw;
        /* the host's load with the part's bounds before its last two records, as walker_loads.h orders them */
        {
            ddr_words to = words(loads);
            for (uint32_t i = 0; i < (nloads - 2) * TE_LOAD_NWORDS; i++)
                to[i] = hl[i];
            nrec = nloads - 2;
            if (has_lo)
                nrec += put_bound(to + nrec * TE_LOAD_NWORDS, &word, 0, plan.splits[j - 1]);
            if (has_hi)
                nrec += put_bound(to + nrec * TE_LOAD_NWORDS, &word, 1, plan.splits[j]);
            for (uint32_t i = 0; i < 2 * TE_LOAD_NWORDS; i++)
                to[nrec * TE_LOAD_NWORDS + i] = hl[(nloads - 2) * TE_LOAD_NWORDS + i];
            nrec += 2;
        }
        dw[TE_DESC_LOADS_ADDR] = loads;
        dw[TE_DESC_LOADS_COUNT] = nrec;
        dw[TE_DESC_RESULT_ADDR] = result;
        /* its shares of the output buffer and of the index spill region (te_parts.h) */
        dw[TE_DESC_OUT_BASE] = out_at;
        dw[TE_DESC_OUT_BYTES] = te_part_out_bytes(host[TE_DESC_OUT_BYTES], plan.part_bytes[j], part_sum);
        out_at += dw[TE_DESC_OUT_BYTES];
        dw[TE_DESC_SPILL_BYTES] = te_part_spill_bytes(host[TE_DESC_SPILL_BYTES], P);
        dw[TE_DESC_SPILL_BASE] = dw[TE_DESC_SPILL_BYTES] ? host[TE_DESC_SPILL_BASE] + j * dw[TE_DESC_SPILL_BYTES] : 0;
        pj[j].desc = d;
    }
    return run_parts(plan.parts, pj, host, t0, timer_now());
}

/* A bound's key from its PARTS_PART words: 0, or prints why not (word `w` of part `j`) and returns -1. */
static int host_bound(ddr_words rec, uint32_t j, uint32_t w, int *has, te_plan_key *k)
{
    const uint32_t addr = rec[w], len = rec[w + 1];
    *has = len != PARTS_NO_BOUND;
    if (!*has)
        return 0;
    if (len > TE_PLAN_MAX_KEY_BYTES - 8 || !in_host(addr, len)) {
        printf("tables: parts head: part %lu word %lu: a bound of %lu bytes at 0x%08lx (at most %u bytes in DDR_HOST)\n",
               (unsigned long)j, (unsigned long)w, (unsigned long)len, (unsigned long)addr,
               (unsigned)(TE_PLAN_MAX_KEY_BYTES - 8));
        return -1;
    }
    k->key = (const uint8_t *)(uintptr_t)addr;
    k->len = len;
    return 0;
}

static int desc_in_host(uint32_t addr)
{
    return addr % TE_DESC_ALIGN == 0 && in_host(addr, 4 * TE_DESC_NWORDS);
}

int parts_host_run(void)
{
    static part_job pj[TE_UNITS_MAX];
    ddr_words head = words(DDR_HOST_BASE), job;
    uint64_t t0 = timer_now();
    uint32_t P;
    int rc;

    if (head[PARTS_HEAD_MAGIC] != PARTS_MAGIC || head[PARTS_HEAD_VERSION] != PARTS_VERSION) {
        printf("tables: parts head at 0x%08lx: no PARTS_MAGIC version %u\n", (unsigned long)DDR_HOST_BASE,
               (unsigned)PARTS_VERSION);
        return TABLES_BAD_DESC;
    }
    P = head[PARTS_HEAD_PARTS];
    if (P < 2) {
        printf("tables: parts head word %u: %lu parts (2 or more; one part is SIM_ARG 0's job)\n",
               (unsigned)PARTS_HEAD_PARTS, (unsigned long)P);
        return TABLES_BAD_DESC;
    }
    if ((rc = units_for(P)) != TABLES_PASS)
        return rc;
    job = words(head[PARTS_HEAD_JOB]);
    if (!desc_in_host(head[PARTS_HEAD_JOB]) || job[TE_DESC_MAGIC] != TE_MAGIC || job[TE_DESC_VERSION] != TE_VERSION ||
        job[TE_DESC_RESULT_ADDR] % TE_OUT_ALIGN || !in_host(job[TE_DESC_RESULT_ADDR], job[TE_DESC_RESULT_BYTES])) {
        printf("tables: parts head word %u: the job's descriptor 0x%08lx is not a TE_MAGIC version %u descriptor with "
               "its result area in DDR_HOST\n", (unsigned)PARTS_HEAD_JOB, (unsigned long)head[PARTS_HEAD_JOB],
               (unsigned)TE_VERSION);
        return TABLES_BAD_DESC;
    }
    for (uint32_t j = 0; j < P; j++) {
        ddr_words rec = head + PARTS_HEAD_NWORDS + PARTS_PART_NWORDS * j;
        pj[j].desc = rec[PARTS_PART_DESC];
        if (pj[j].desc && !desc_in_host(pj[j].desc)) {
            printf("tables: parts head: part %lu word %u: descriptor 0x%08lx is not in DDR_HOST at a multiple of %u\n",
                   (unsigned long)j, (unsigned)PARTS_PART_DESC, (unsigned long)pj[j].desc, (unsigned)TE_DESC_ALIGN);
            return TABLES_BAD_DESC;
        }
        if (host_bound(rec, j, PARTS_PART_LO_ADDR, &pj[j].has_lo, &pj[j].lo) != 0 ||
            host_bound(rec, j, PARTS_PART_HI_ADDR, &pj[j].has_hi, &pj[j].hi) != 0)
            return TABLES_BAD_DESC;
    }
    return run_parts(P, pj, job, t0, timer_now());
}
