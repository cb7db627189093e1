/* The sub-compaction plan (te_plan.h): the model's PlanSubcompactions (hw/ip/table_engine/model/
 * subcompaction.cc) step for step, so that its choices and its counts are the model's. A run's data blocks
 * are numbered through its tables (the model's flat RunIndex); block b's bound is the user key of its
 * index entry, except that a table's last block takes the next table's first bound when that is lower. */
#include "te_plan.h"

#include "te_regs.h"

#define TRAILER_BYTES 5u /* a block's type byte and CRC after its contents */

typedef struct {
    const uint8_t *data, *restarts; /* restarts: the block's restart array (data + entries_end) */
    uint32_t len, entries_end, n;   /* n: entries (data blocks); entries_end: where the restart array starts */
    uint32_t first;               /* the run's block number of its first block */
    uint64_t base, end;           /* the run's data-block bytes before the table and to its end */
    te_plan_key first_key;        /* its first entry's user key */
    te_plan_key last_bound;       /* its last block's bound (the next table's first when lower) */
} table_info;

typedef struct {
    table_info *t;
    const table_info *last; /* the table of the block read last: the next read is mostly in it too */
    uint32_t ntables, nblocks, nsamples, run;
    uint32_t *samples; /* block numbers, ascending */
} run_info;

/* One index entry as read. */
typedef struct {
    te_plan_key user;
    uint64_t end; /* bytes up to the end of its data block (offset + size + trailer; the run's, by read_block) */
    uint32_t at;  /* its offset in the index block */
} entry;

typedef struct {
    te_plan_error *err;
    te_plan_stats *st;
} ctx;

static int fail(ctx *c, uint32_t code, const run_info *r, const table_info *t, uint32_t offset)
{
    c->err->code = code;
    c->err->run = r->run;
    c->err->table = (uint32_t)(t - r->t);
    c->err->offset = offset;
    return TE_PLAN_E_BLOCK;
}

static uint32_t load32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A varint of at most 10 bytes below `lim`; NULL when it runs past `lim` or is longer. A block handle's
 * offset and size take 4 bytes at most below 256 MiB: those are read with 32-bit shifts (the CPU has no
 * 64-bit ones), the rest from the start again in 64 bits. */
static const uint8_t *varint64_slow(const uint8_t *p, const uint8_t *lim, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70 && p < lim; shift += 7) {
        uint8_t b = *p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return p;
        }
    }
    return NULL;
}

static inline const uint8_t *varint64(const uint8_t *p, const uint8_t *lim, uint64_t *v)
{
    uint32_t x = 0;
    const uint8_t *q = p;
    for (unsigned shift = 0; shift < 28 && q < lim; shift += 7) {
        uint32_t b = *q++;
        x |= (b & 0x7f) << shift;
        if (b < 0x80) {
            *v = x;
            return q;
        }
    }
    return varint64_slow(p, lim, v);
}

/* A varint32 as LevelDB's GetVarint32Ptr reads it: at most 5 bytes, the high bits of the fifth dropped. */
static const uint8_t *varint32(const uint8_t *p, const uint8_t *lim, uint32_t *v)
{
    uint32_t x = 0;
    for (unsigned shift = 0; shift <= 28 && p < lim; shift += 7) {
        uint8_t b = *p++;
        x |= (uint32_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return p;
        }
    }
    return NULL;
}

/* Entry i of table t (i < t->n), checked: it lies between its restart point and the next (or the
 * restart array), shares no prefix, has a tag. With `want_end` its block handle is read too (the handle's
 * varints inside the value): only the samples, the tables' last entries and the windows' edges need a
 * block's bytes; a search probe needs its key alone. Index entries' three lengths are one byte each (keys
 * below 128 bytes): read at once, the general varints only when a byte says more follow. */
static int read_entry(ctx *c, const run_info *r, const table_info *t, uint32_t i, entry *e, int want_end)
{
    const uint8_t *d = t->data, *lim = d + t->entries_end, *p;
    const uint8_t *slot = t->restarts + 4 * i;
    const uint32_t at = load32(slot);
    const uint32_t next = i + 1 < t->n ? load32(slot + 4) : t->entries_end;
    uint32_t shared, non_shared, value_len;
    uint64_t off, size;

    if (at >= t->entries_end)
        return fail(c, TE_ERR_BAD_BLOCK, r, t, t->entries_end + 4 * i); /* the restart point itself */
    p = d + at;
    if (t->entries_end - at >= 3 && !((p[0] | p[1] | p[2]) & 0x80)) {
        shared = p[0];
        non_shared = p[1];
        value_len = p[2];
        p += 3;
    } else {
        p = varint32(p, lim, &shared);
        if (p)
            p = varint32(p, lim, &non_shared);
        if (p)
            p = varint32(p, lim, &value_len);
        if (!p)
            return fail(c, TE_ERR_BAD_VARINT, r, t, at);
    }
    if (shared != 0 || non_shared > (uint32_t)(lim - p) || value_len > (uint32_t)(lim - p) - non_shared)
        return fail(c, TE_ERR_BAD_BLOCK, r, t, at);
    if (non_shared > TE_PLAN_MAX_KEY_BYTES)
        return fail(c, TE_ERR_KEY_TOO_LONG, r, t, at);
    if (non_shared < 8 || (uint32_t)(p - d) + non_shared + value_len != next)
        return fail(c, TE_ERR_BAD_BLOCK, r, t, at);
    e->user.key = p;
    e->user.len = non_shared - 8;
    e->at = at;
    if (!want_end)
        return 0;
    p += non_shared;
    lim = p + value_len;
    p = varint64(p, lim, &off);
    if (p)
        p = varint64(p, lim, &size);
    if (!p)
        return fail(c, TE_ERR_BAD_VARINT, r, t, at);
    e->end = off + size + TRAILER_BYTES;
    return 0;
}

/* The model's CountedCompare: memcmp then length; counts the bytes up to and including the first difference.
 * `counted` 0: an order check the model does not make, counted apart (`checks`). */
static int compare_keys(ctx *c, const te_plan_key *a, const te_plan_key *b, int counted)
{
    const uint8_t *x = a->key, *y = b->key;
    const uint32_t n = a->len < b->len ? a->len : b->len;
    uint32_t i = 0;
    while (i < n && x[i] == y[i])
        i++;
    if (counted) {
        c->st->comparisons++;
        c->st->compared_bytes += i + 1 < n ? i + 1 : n;
    } else {
        c->st->checks++;
    }
    if (i < n)
        return (int)x[i] - (int)y[i];
    return a->len < b->len ? -1 : a->len > b->len;
}

static int compare(ctx *c, te_plan_key a, te_plan_key b)
{
    return compare_keys(c, &a, &b, 1);
}

/* An order check the model does not make: not in its counts. */
static int check(ctx *c, te_plan_key a, te_plan_key b)
{
    return compare_keys(c, &a, &b, 0);
}

/* The table holding block b of the run (b < nblocks): the last table whose first block is <= b. */
static const table_info *table_of(const run_info *r, uint32_t b)
{
    uint32_t lo = 0, hi = r->ntables;
    while (lo < hi) {
        uint32_t mid = (lo + hi) >> 1;
        if (r->t[mid].first > b)
            hi = mid;
        else
            lo = mid + 1;
    }
    return &r->t[lo - 1];
}

/* Block b's bound, and with `want_end` the run's bytes up to its end. */
static int read_block(ctx *c, run_info *r, uint32_t b, entry *e, int want_end)
{
    const table_info *t = r->last;
    int rc;
    if (b - t->first >= t->n) /* unsigned: below its first block too */
        r->last = t = table_of(r, b);
    rc = read_entry(c, r, t, b - t->first, e, want_end);
    if (rc)
        return rc;
    if (want_end)
        e->end += t->base;
    if (b == t->first + t->n - 1)
        e->user = t->last_bound;
    return 0;
}

/* Step 1: each table's block header, its first and last entries (the model counts two reads a table), its
 * bytes; then the last bounds lowered to the next table's first, back to front (the model's ReadRunIndex:
 * one comparison at every table boundary, an empty table's too). */
static int index_run(ctx *c, run_info *r)
{
    uint64_t base = 0;
    uint32_t first = 0;
    for (uint32_t i = 0; i < r->ntables; i++) {
        table_info *t = &r->t[i];
        uint32_t restarts;
        entry e, f;
        int rc;
        t->first = first;
        t->base = t->end = base;
        if (t->len < 4)
            return fail(c, TE_ERR_BAD_BLOCK, r, t, 0);
        restarts = load32(t->data + t->len - 4);
        if (restarts == 0 || restarts > (t->len - 4) / 4)
            return fail(c, TE_ERR_BAD_BLOCK, r, t, t->len - 4);
        t->entries_end = t->len - 4 - 4 * restarts;
        t->restarts = t->data + t->entries_end;
        if (load32(t->data + t->entries_end) != 0)
            return fail(c, TE_ERR_BAD_BLOCK, r, t, t->entries_end);
        t->n = t->entries_end ? restarts : 0;
        c->st->index_entries += 2;
        if (t->n) {
            if ((rc = read_entry(c, r, t, t->n - 1, &e, 1)) != 0)
                return rc;
            f = e;
            if (t->n > 1 && (rc = read_entry(c, r, t, 0, &f, 0)) != 0)
                return rc;
            if (check(c, f.user, e.user) > 0) /* the table's bounds descend */
                return fail(c, TE_ERR_KEY_ORDER, r, t, e.at);
            t->first_key = f.user;
            t->last_bound = e.user;
            base += e.end;
            t->end = base;
        }
        first += t->n;
    }
    r->nblocks = first;
    for (uint32_t i = r->ntables; i-- > 1;) {
        uint32_t b = r->t[i].first;
        const table_info *nt;
        table_info *pt;
        if (b == 0 || b >= r->nblocks)
            continue;
        nt = table_of(r, b);
        pt = (table_info *)table_of(r, b - 1);
        te_plan_key fb = nt->n == 1 ? nt->last_bound : nt->first_key;
        if (compare(c, fb, pt->last_bound) < 0)
            pt->last_bound = fb;
    }
    return 0;
}

/* Work space: a bump allocator, 8-byte aligned. */
typedef struct {
    uint8_t *p, *end;
} arena;

static size_t round8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static void *take(arena *a, size_t bytes)
{
    uint8_t *p = a->p;
    bytes = round8(bytes);
    if (bytes > (size_t)(a->end - p))
        return 0;
    a->p = p + bytes;
    return p;
}

/* Samples of a run at most: n / stride + its last block, stride = max(1, n / (S * P)). */
static uint32_t samples_cap(uint32_t parts)
{
    return 2 * TE_PLAN_SAMPLES_PER_PART * parts + 1;
}

size_t te_plan_work_bytes(uint32_t runs, uint32_t tables, uint32_t parts)
{
    size_t cand = (size_t)runs * samples_cap(parts), splits = parts ? parts - 1 : 0;
    return round8(sizeof(run_info) * runs) + round8(sizeof(table_info) * tables) + runs * round8(4 * samples_cap(parts)) +
           round8(8 * cand) + round8(4 * cand) + round8(sizeof(te_plan_key) * cand) + /* candidates */
           3 * round8(8 * runs) + round8(sizeof(entry) * runs) +                     /* per run in the merge */
           round8(sizeof(te_plan_key) * splits) + 2 * round8(4 * splits * runs) +     /* splits, taken, past */
           round8(4 * splits) +                                                        /* each split's run */
           round8(4 * parts) + round8(sizeof(te_plan_window) * parts * runs) + round8(8 * parts);
}

static uint32_t window_end(ctx *c, const run_info *r, uint32_t b)
{
    while (b + 1 < r->nblocks && table_of(r, b + 1)->first == b + 1) {
        c->st->index_entries++;
        b++;
    }
    return b < r->nblocks ? b : r->nblocks - 1;
}

/* Step 2: the runs' samples merged by bound (ties: the lower run first), each a candidate with its bytes
 * estimate: the sampled run's exactly, the others' at the midpoint between their samples around it. */
static int merge_samples(ctx *c, run_info *runs, uint32_t K, arena *a, uint64_t *est, uint32_t *merged,
                         te_plan_key *cand, uint32_t *ncand)
{
    entry *head = take(a, sizeof(entry) * K);
    uint64_t *reached = take(a, 8 * K), *next_end = take(a, 8 * K);
    uint32_t *taken = take(a, 8 * K), m = 0;
    uint64_t mids = 0; /* the sum over the runs of (reached + next_end) / 2, kept as one run's terms change */
    int rc;
    for (uint32_t r = 0; r < K; r++) {
        taken[r] = 0;
        reached[r] = next_end[r] = 0;
        if (runs[r].nsamples) {
            if ((rc = read_block(c, &runs[r], runs[r].samples[0], &head[r], 1)) != 0)
                return rc;
            next_end[r] = head[r].end;
            mids += next_end[r] >> 1;
        }
    }
    for (;;) {
        int best = -1;
        uint32_t s;
        uint64_t e;
        for (uint32_t r = 0; r < K; r++) {
            if (taken[r] >= runs[r].nsamples)
                continue;
            if (best < 0 || compare(c, head[r].user, head[best].user) < 0)
                best = (int)r;
        }
        if (best < 0)
            break;
        s = (uint32_t)best;
        mids -= (reached[s] + next_end[s]) >> 1;
        cand[m] = head[s].user;
        merged[m] = s;
        reached[s] = head[s].end;
        if (++taken[s] < runs[s].nsamples) {
            uint32_t b = runs[s].samples[taken[s]];
            if ((rc = read_block(c, &runs[s], b, &head[s], 1)) != 0)
                return rc;
            if (check(c, head[s].user, cand[m]) < 0) /* the run's bounds descend */
                return fail(c, TE_ERR_KEY_ORDER, &runs[s], table_of(&runs[s], b), head[s].at);
            next_end[s] = head[s].end;
        } else {
            next_end[s] = reached[s];
        }
        e = (reached[s] + next_end[s]) >> 1;
        mids += e;
        est[m++] = reached[s] + (mids - e);
    }
    *ncand = m;
    return 0;
}

int te_plan(const te_plan_input *in, void *work, size_t work_bytes, te_plan_result *res)
{
    const uint32_t K = in->runs, P = in->parts;
    arena a = {(uint8_t *)work, (uint8_t *)work + work_bytes};
    ctx c = {&res->err, &res->stats};
    run_info *runs;
    table_info *tables;
    const te_plan_block *blk = in->index;
    uint32_t ntables = 0, nsamples = 0, nmerged, S = 0;
    uint64_t *est;
    uint32_t *merged, *split_taken, *split_run, *past, *taken;
    te_plan_key *cand;
    int rc;

    res->parts = P;
    res->runs = K;
    res->nsplits = 0;
    res->total_bytes = 0;
    res->stats = (te_plan_stats){0, 0, 0, 0};
    res->err = (te_plan_error){0, 0, 0, 0};
    if (K < 1 || K > TE_PLAN_MAX_RUNS || P < 2 || P > TE_PLAN_MAX_PARTS)
        return TE_PLAN_E_ARGS;
    for (uint32_t r = 0; r < K; r++) {
        if (in->run_tables[r] > (1u << 20))
            return TE_PLAN_E_ARGS;
        ntables += in->run_tables[r];
    }
    if (((uintptr_t)work & 7) || work_bytes < te_plan_work_bytes(K, ntables, P))
        return TE_PLAN_E_SPACE;
    runs = take(&a, sizeof(run_info) * K);
    tables = take(&a, sizeof(table_info) * ntables);

    /* Step 1, and each run's samples: every stride-th block and its last. */
    for (uint32_t r = 0; r < K; r++) {
        run_info *ri = &runs[r];
        uint32_t n, stride, k = 0;
        ri->t = tables;
        ri->ntables = in->run_tables[r];
        ri->run = r;
        for (uint32_t i = 0; i < ri->ntables; i++, tables++, blk++) {
            tables->data = blk->data;
            tables->len = blk->len;
        }
        if ((rc = index_run(&c, ri)) != 0)
            return rc;
        ri->last = ri->t;
        if (ri->ntables)
            res->total_bytes += ri->t[ri->ntables - 1].end;
        n = ri->nblocks;
        stride = n / (TE_PLAN_SAMPLES_PER_PART * P);
        if (stride == 0)
            stride = 1;
        ri->samples = take(&a, 4 * samples_cap(P));
        for (uint32_t b = stride - 1; b < n; b += stride)
            ri->samples[k++] = b;
        if (n > 0 && ri->samples[k - 1] != n - 1)
            ri->samples[k++] = n - 1;
        ri->nsamples = k;
        nsamples += k;
        c.st->index_entries += k;
    }
    est = take(&a, 8 * nsamples);
    merged = take(&a, 4 * nsamples);
    cand = take(&a, sizeof(te_plan_key) * nsamples);
    if ((rc = merge_samples(&c, runs, K, &a, est, merged, cand, &nmerged)) != 0)
        return rc;

    /* Split j: the candidate whose estimate is nearest j/P of the bytes; the last candidate (the largest
     * bound of all) never splits; a split not above the previous one is dropped. */
    res->splits = take(&a, sizeof(te_plan_key) * (P - 1));
    split_taken = take(&a, 4 * (P - 1) * K);
    split_run = take(&a, 4 * (P - 1));
    past = take(&a, 4 * (P - 1) * K);
    res->nwindows = take(&a, 4 * P);
    res->windows = take(&a, sizeof(te_plan_window) * P * K);
    res->part_bytes = take(&a, 8 * P);
    taken = past; /* the samples of each run up to candidate q, kept as q moves; past is filled after */
    if (nmerged > 0) {
        const uint32_t n = nmerged - 1;
        const te_plan_key top = cand[n];
        /* target = total * j / P, stepped without a division per split */
        const uint64_t step = res->total_bytes / P, rest = res->total_bytes % P;
        uint64_t target = 0, frac = 0;
        uint32_t next = 0, k = 0;
        for (uint32_t r = 0; r < K; r++)
            taken[r] = 0;
        taken[merged[0]] = 1;
        for (uint32_t j = 1; j < P && next < n; j++) {
            uint32_t q = next;
            target += step;
            frac += rest;
            if (frac >= P) {
                frac -= P;
                target++;
            }
            while (q + 1 < n && est[q] < target)
                q++;
            if (q > next && est[q] >= target && target - est[q - 1] < est[q] - target)
                q--;
            next = q + 1;
            while (k < q)
                taken[merged[++k]]++;
            while (k > q)
                taken[merged[k--]]--;
            if (S > 0 && compare(&c, cand[q], res->splits[S - 1]) <= 0)
                continue;
            if (compare(&c, cand[q], top) >= 0)
                continue;
            res->splits[S] = cand[q];
            split_run[S] = merged[q];
            for (uint32_t r = 0; r < K; r++)
                split_taken[S * K + r] = taken[r];
            S++;
        }
    }
    res->nsplits = S;

    /* Step 3: per split and run, c = the first block whose bound is past the split, searched between the
     * run's two samples the merge placed around it (past the later one too when its bound equals it). The
     * later sample's bound is the merge's candidate (counted as read again, as the model does): found by
     * walking the merge order, where the run's samples come in order and the splits' samples ascend. */
    for (uint32_t r = 0; r < K; r++) {
        run_info *ri = &runs[r];
        uint32_t m = 0, seen = 0; /* seen: run r's samples among candidates 0 .. m-1 */
        for (uint32_t i = 0; i < S; i++) {
            const uint32_t t = split_taken[i * K + r];
            uint32_t lo = t > 0 ? ri->samples[t - 1] + 1 : 0, hi = ri->nblocks;
            entry e;
            int found = 0;
            /* The split is this run's sample samples[t - 1]: the block after it is past the split unless its
             * bound equals it (a user key over several blocks), so it is looked at first. */
            if (split_run[i] == r && lo < hi) {
                c.st->index_entries++;
                if ((rc = read_block(&c, ri, lo, &e, 0)) != 0)
                    return rc;
                found = compare(&c, e.user, res->splits[i]) > 0;
                if (found)
                    hi = lo;
                else
                    lo++;
            }
            if (!found && t < ri->nsamples) {
                while (merged[m] != r || seen < t)
                    seen += merged[m++] == r;
                c.st->index_entries++;
                if (compare(&c, cand[m], res->splits[i]) > 0)
                    hi = ri->samples[t];
            }
            while (lo < hi) {
                uint32_t mid = lo + ((hi - lo) >> 1);
                c.st->index_entries++;
                if ((rc = read_block(&c, ri, mid, &e, 0)) != 0)
                    return rc;
                if (compare(&c, e.user, res->splits[i]) > 0)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            if (i > 0 && past[(i - 1) * K + r] > lo)
                lo = past[(i - 1) * K + r];
            past[i * K + r] = lo;
        }
    }

    /* The windows: part j reads [c(j-1), c(j)] of each run, and on past c(j) while c(j) ends a table. */
    for (uint32_t j = 0; j < P; j++) {
        res->nwindows[j] = 0;
        res->part_bytes[j] = 0;
    }
    for (uint32_t j = 0; j <= S; j++) {
        const int has_lo = j > 0, has_hi = j < S;
        for (uint32_t r = 0; r < K; r++) {
            run_info *ri = &runs[r];
            const uint32_t n = ri->nblocks;
            const uint32_t first = has_lo ? past[(j - 1) * K + r] : 0;
            const uint32_t last = has_hi ? window_end(&c, ri, past[j * K + r]) : n - 1;
            const table_info *ft, *lt;
            te_plan_window *w;
            entry e;
            if (n == 0 || first >= n)
                continue;
            w = &res->windows[j * K + res->nwindows[j]++];
            ft = table_of(ri, first);
            lt = table_of(ri, last);
            w->run = r;
            w->first_table = (uint32_t)(ft - ri->t);
            w->last_table = (uint32_t)(lt - ri->t);
            w->first_block = first - ft->first;
            w->last_block = last - lt->first;
            w->lo_blocks = has_lo ? window_end(&c, ri, first) - first + 1 : 0;
            w->hi_from = has_hi ? past[j * K + r] - first : last - first + 1;
            /* its bytes: the model keeps every block's; the firmware reads the two entries around it */
            if ((rc = read_block(&c, ri, last, &e, 1)) != 0)
                return rc;
            w->bytes = e.end;
            if (first > 0) {
                if ((rc = read_block(&c, ri, first - 1, &e, 1)) != 0)
                    return rc;
                w->bytes -= e.end;
            }
            res->part_bytes[j] += w->bytes;
        }
    }
    return TE_PLAN_OK;
}

const char *te_plan_err_name(uint32_t code)
{
#define TE_PLAN_NAME(name, value) \
    case value:                    \
        return #name;
    switch (code) { TE_ERR_LIST(TE_PLAN_NAME) }
#undef TE_PLAN_NAME
    return "UNKNOWN";
}
