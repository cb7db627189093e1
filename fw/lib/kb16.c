/* KB16 encoder, decoder, two-way merge and workload generator (see kb16.h). */
#include "kb16.h"

#include <stdlib.h>
#include <string.h>

#define KB16_ERR_NAME_(name, code) [code] = #name,
static const char *const err_names[] = {KB16_ERROR_LIST(KB16_ERR_NAME_)};

const char *kb16_err_name(unsigned code)
{
    if (code < sizeof err_names / sizeof err_names[0])
        return err_names[code];
    if (code == KB16_ERR_KEY_TOO_LONG)
        return "KEY_TOO_LONG";
    if (code == KB16_ERR_ARG)
        return "BAD_ARGUMENT";
    if (code == KB16_ERR_SCRATCH)
        return "SCRATCH_TOO_SMALL";
    if (code == KB16_ERR_OPEN_PART)
        return "OPEN_PART";
    return "UNKNOWN";
}

int kb16_key_cmp(const uint8_t *a, unsigned alen, const uint8_t *b, unsigned blen)
{
    unsigned n = alen < blen ? alen : blen, i;
    for (i = 0; i < n; i++) /* keys are short and differ early: no library call */
        if (a[i] != b[i])
            return (int)a[i] - (int)b[i];
    return (int)alen - (int)blen;
}

static inline void key_copy(kb16_keybuf *d, const kb16_keybuf *s)
{
    d->w[0] = s->w[0];
    d->w[1] = s->w[1];
    d->w[2] = s->w[2];
    d->w[3] = s->w[3];
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static int group_ok(unsigned g) { return g >= KB16_MIN_GROUP && g <= KB16_MAX_GROUP; }

/* ---- decoder ---------------------------------------------------------------------------- */

int kb16_reader_init(kb16_reader *r, const uint8_t *buf, size_t len, unsigned group)
{
    if (!r)
        return KB16_ERR_ARG;
    memset(r, 0, sizeof *r);
    if (!buf && len) {
        r->err = KB16_ERR_ARG;
        return KB16_ERR_ARG;
    }
    r->buf = buf;
    r->len = len;
    r->n_entries = len / KB16_ENTRY_BYTES;
    r->group = group;
    if (!group_ok(group)) {
        r->err = KB16_ERR_BAD_GROUP;
        return KB16_ERR_BAD_GROUP;
    }
    return KB16_OK;
}

static int reader_fail(kb16_reader *r, unsigned code, size_t index)
{
    r->err = code;
    r->err_index = index;
    return -(int)code;
}

/* Check one entry; every fault of the entry is evaluated and the lowest code wins (as the IP). */
static unsigned check_entry(const kb16_reader *r, const uint8_t *e, size_t idx, kb16_keybuf *key,
                            unsigned *key_len)
{
    uint32_t hdr = rd32(e), addr = rd32(e + 4);
    unsigned u = hdr & KB16_HDR_UNSHARED_MASK;
    unsigned s = (hdr & KB16_HDR_SHARED_MASK) >> KB16_HDR_SHARED_SHIFT;
    int vir = (hdr & KB16_HDR_VIR) != 0, pad = (hdr & KB16_HDR_PAD) != 0;
    unsigned slot = r->slot;
    int last_slot = slot == r->group - 1, last_entry = idx + 1 == r->n_entries;
    const uint8_t *kb = e + 8;
    unsigned i;

    if (hdr & KB16_HDR_RESERVED)
        return KB16_ERR_RESERVED_BITS;
    if (s > KB16_MAX_PART || u > KB16_MAX_PART)
        return KB16_ERR_LEN_OVER_8;
    if (s > r->prev_len)
        return KB16_ERR_SHARED_OVER_PREV;
    if (slot == 0 && s != 0)
        return KB16_ERR_GROUP_START_SHARED;
    if (vir && (last_slot || last_entry))
        return KB16_ERR_VIRTUAL_AT_END;
    if (r->after_vir && (vir || pad)) /* the entry after a virtual entry must be real */
        return KB16_ERR_VIRTUAL_AT_END;
    if (pad) {
        int other = (hdr & ~KB16_HDR_PAD) != 0 || addr != 0;
        for (i = 0; i < 8 && !other; i++)
            other = kb[i] != 0;
        if (other || !last_slot)
            return KB16_ERR_BAD_PAD;
    }
    /* Decoded key: the first s bytes of the previous decoded key, then u bytes. */
    key_copy(key, &r->prev);
    for (i = 0; i < u; i++)
        key->b[s + i] = kb[i];
    *key_len = s + u;
    if (!vir && !pad) {
        if (*key_len == 0)
            return KB16_ERR_EMPTY_KEY;
        if (r->have_real && kb16_key_cmp(key->b, *key_len, r->last_real.b, r->last_real_len) <= 0)
            return KB16_ERR_NOT_INCREASING;
    }
    for (i = u; i < 8; i++)
        if (kb[i])
            return KB16_ERR_FILL_NONZERO;
    if (vir && addr != 0)
        return KB16_ERR_FILL_NONZERO;
    return KB16_OK;
}

/* kb16_reader_next into an aligned key buffer (the merge's fast path). */
static int reader_step(kb16_reader *r, kb16_keybuf *key, unsigned *key_len, uint32_t *addr)
{
    kb16_keybuf k;
    unsigned klen = 0;

    if (r->err)
        return -(int)r->err;
    while (r->idx < r->n_entries) {
        size_t idx = r->idx;
        const uint8_t *e = r->buf + idx * KB16_ENTRY_BYTES;
        uint32_t hdr = rd32(e);
        unsigned code = check_entry(r, e, idx, &k, &klen);
        if (code)
            return reader_fail(r, code, idx);
        r->idx++;
        if (++r->slot == r->group)
            r->slot = 0;
        r->after_vir = (hdr & KB16_HDR_VIR) != 0;
        if (hdr & KB16_HDR_PAD)
            continue; /* a pad carries no key and keeps the previous one */
        key_copy(&r->prev, &k);
        r->prev_len = klen;
        if (hdr & KB16_HDR_VIR)
            continue;
        key_copy(&r->last_real, &k);
        r->last_real_len = klen;
        r->have_real = 1;
        key_copy(key, &k);
        *key_len = klen;
        *addr = rd32(e + 4);
        return 1;
    }
    /* All whole entries are fine; a ragged tail is reported after them. */
    if (r->len % KB16_ENTRY_BYTES)
        return reader_fail(r, KB16_ERR_LENGTH, r->n_entries);
    return 0;
}

int kb16_reader_next(kb16_reader *r, uint8_t key[KB16_MAX_KEY], unsigned *key_len, uint32_t *addr)
{
    kb16_keybuf k;
    int rc = reader_step(r, &k, key_len, addr);
    if (rc == 1)
        memcpy(key, k.b, KB16_MAX_KEY);
    return rc;
}

int kb16_decode(const uint8_t *buf, size_t len, unsigned group, uint8_t (*keys)[KB16_MAX_KEY],
                uint8_t *lens, uint32_t *addrs, size_t key_cap, size_t *n_keys, size_t *err_index)
{
    kb16_reader r;
    uint8_t k[KB16_MAX_KEY];
    unsigned klen = 0;
    uint32_t a;
    size_t n = 0;
    int rc = kb16_reader_init(&r, buf, len, group);

    if (err_index)
        *err_index = 0;
    if (rc == KB16_OK) {
        while ((rc = kb16_reader_next(&r, k, &klen, &a)) == 1) {
            if (n < key_cap) {
                if (keys)
                    memcpy(keys[n], k, klen);
                if (lens)
                    lens[n] = (uint8_t)klen;
                if (addrs)
                    addrs[n] = a;
            }
            n++;
        }
        if (rc < 0) {
            rc = (int)r.err;
            if (err_index)
                *err_index = r.err_index;
        }
    }
    if (n_keys)
        *n_keys = n;
    return rc;
}

/* ---- encoder ---------------------------------------------------------------------------- */

int kb16_writer_init(kb16_writer *w, uint8_t *out, size_t cap, unsigned group)
{
    if (!w)
        return KB16_ERR_ARG;
    memset(w, 0, sizeof *w);
    if (!out && cap)
        return KB16_ERR_ARG;
    w->out = out;
    w->cap = cap;
    w->group = group;
    return group_ok(group) ? KB16_OK : KB16_ERR_BAD_GROUP;
}

/* Write one entry unless it would pass the capacity. The entry is built in a local buffer and
 * copied once: on a write-through cache every store is a bus write, so 4 word stores beat 16 byte
 * stores (memcpy moves whole words when the output is aligned, as entries are in practice). */
static int emit(kb16_writer *w, uint32_t hdr, uint32_t addr, const uint8_t *bytes, unsigned n,
                size_t *err_index)
{
    uint32_t ent[4];
    uint8_t *b = (uint8_t *)ent, *dst;
    unsigned i;
    if ((w->entries + 1) * KB16_ENTRY_BYTES > w->cap) {
        if (err_index)
            *err_index = w->entries;
        return KB16_ERR_OUT_OVERFLOW;
    }
    wr32(b, hdr);
    wr32(b + 4, addr);
    ent[2] = ent[3] = 0;
    for (i = 0; i < n; i++)
        b[8 + i] = bytes[i];
    dst = w->out + w->entries * KB16_ENTRY_BYTES;
#ifdef __GNUC__
    if (((uintptr_t)dst & 3u) == 0) /* inlined as four word stores */
        memcpy(__builtin_assume_aligned(dst, 4), ent, sizeof ent);
    else
#endif
        memcpy(dst, ent, sizeof ent);
    w->entries++;
    if (++w->slot == w->group)
        w->slot = 0;
    return KB16_OK;
}

static uint32_t header(unsigned shared, unsigned unshared) { return shared << KB16_HDR_SHARED_SHIFT | unshared; }

/* kb16_writer_put; `kb`, when given, is the same key in an aligned buffer (copied by words). */
static int writer_put(kb16_writer *w, const uint8_t *key, unsigned key_len, uint32_t addr, size_t *err_index,
                      const kb16_keybuf *kb)
{
    unsigned slot, s = 0, i;
    int rc;

    if (!group_ok(w->group))
        return KB16_ERR_BAD_GROUP;
    if (key_len == 0)
        return KB16_ERR_EMPTY_KEY;
    if (key_len > KB16_MAX_KEY)
        return KB16_ERR_KEY_TOO_LONG;
    if (w->have_key && kb16_key_cmp(key, key_len, w->prev.b, w->prev_len) <= 0)
        return KB16_ERR_NOT_INCREASING;

    slot = w->slot;
    if (slot != 0) {
        unsigned lim = w->prev_len < key_len ? w->prev_len : key_len;
        while (s < lim && s < KB16_MAX_PART && w->prev.b[s] == key[s])
            s++;
    }
    if (key_len - s <= KB16_MAX_PART) {
        rc = emit(w, header(s, key_len - s), addr, key + s, key_len - s, err_index);
    } else {
        if (slot == w->group - 1) { /* a virtual entry may not take a group's last slot */
            if ((rc = emit(w, KB16_HDR_PAD, 0, 0, 0, err_index)) != KB16_OK)
                return rc;
            s = 0;
        }
        if ((rc = emit(w, KB16_HDR_VIR | header(s, KB16_MAX_PART), 0, key + s, KB16_MAX_PART, err_index)) != KB16_OK)
            return rc;
        rc = emit(w, header(KB16_MAX_PART, key_len - KB16_MAX_PART), addr, key + KB16_MAX_PART,
                  key_len - KB16_MAX_PART, err_index);
    }
    if (rc != KB16_OK)
        return rc;
    if (kb)
        key_copy(&w->prev, kb);
    else
        for (i = 0; i < key_len; i++)
            w->prev.b[i] = key[i];
    w->prev_len = key_len;
    w->have_key = 1;
    w->keys++;
    return KB16_OK;
}

int kb16_writer_put(kb16_writer *w, const uint8_t *key, unsigned key_len, uint32_t addr, size_t *err_index)
{
    return writer_put(w, key, key_len, addr, err_index, 0);
}

int kb16_encode(const uint8_t *const *keys, const uint8_t *lens, const uint32_t *addrs, size_t n,
                unsigned group, uint8_t *out, size_t out_cap, size_t *out_len, size_t *err_index)
{
    kb16_writer w;
    size_t i, idx = 0;
    int rc = kb16_writer_init(&w, out, out_cap, group);

    for (i = 0; rc == KB16_OK && i < n; i++) {
        rc = kb16_writer_put(&w, keys[i], lens[i], addrs[i], &idx);
        if (rc != KB16_OK && rc != KB16_ERR_OUT_OVERFLOW)
            idx = i; /* input errors name the offending key */
    }
    if (out_len)
        *out_len = kb16_writer_bytes(&w);
    if (err_index)
        *err_index = rc == KB16_OK ? 0 : idx;
    return rc;
}

/* ---- merge ------------------------------------------------------------------------------ */

static int merge_fail(kb16_merge_result *res, unsigned code, unsigned input, size_t index)
{
    res->status = code;
    res->err_input = input;
    res->err_index = index;
    return (int)code;
}

/* Steps shared by the two merges. Retire a superseded address to the invalid list. */
static int merge_retire(kb16_merge_result *res, uint32_t *inv, size_t inv_cap, uint32_t addr)
{
    if (res->inv_count >= inv_cap)
        return merge_fail(res, KB16_ERR_INV_OVERFLOW, 0, res->inv_count);
    inv[res->inv_count++] = addr;
    return KB16_OK;
}

/* Count the key run `i` just gave and read its next one (*have: 1, 0 at its end); a malformed entry
 * fails the merge naming run i and the entry. */
static int merge_next(kb16_merge_result *res, kb16_reader *r, unsigned i, kb16_keybuf *k, unsigned *kl, uint32_t *a,
                      int *have)
{
    res->in_keys[i]++;
    *have = reader_step(r, k, kl, a);
    return *have < 0 ? merge_fail(res, r->err, i, r->err_index) : KB16_OK;
}

/* What the output holds, whatever ended the merge. */
static int merge_end(kb16_merge_result *res, const kb16_writer *w, int rc)
{
    res->out_entries = w->entries;
    res->out_bytes = kb16_writer_bytes(w);
    res->out_keys = w->keys;
    return rc;
}

int kb16_merge(const uint8_t *run0, size_t len0, const uint8_t *run1, size_t len1, unsigned group,
               uint8_t *out, size_t out_cap, uint32_t *inv, size_t inv_cap, kb16_merge_result *res)
{
    kb16_reader r[2];
    kb16_writer w;
    kb16_keybuf k[2];
    unsigned kl[2];
    uint32_t a[2];
    int have[2], i, rc = KB16_OK;
    size_t idx = 0;

    if (!res)
        return KB16_ERR_ARG;
    memset(res, 0, sizeof *res);
    if (!group_ok(group))
        return merge_fail(res, KB16_ERR_BAD_GROUP, 0, 0);
    if (kb16_reader_init(&r[0], run0, len0, group) || kb16_reader_init(&r[1], run1, len1, group) ||
        kb16_writer_init(&w, out, out_cap, group) || (!inv && inv_cap))
        return merge_fail(res, KB16_ERR_ARG, 0, 0);

    for (i = 0; i < 2; i++) {
        have[i] = reader_step(&r[i], &k[i], &kl[i], &a[i]);
        if (have[i] < 0) {
            rc = merge_fail(res, r[i].err, (unsigned)i, r[i].err_index);
            goto done;
        }
    }
    while (have[0] || have[1]) {
        int c = have[0] && have[1] ? kb16_key_cmp(k[0].b, kl[0], k[1].b, kl[1]) : (have[0] ? -1 : 1);
        int take = c <= 0 ? 0 : 1;
        if (c == 0 && (rc = merge_retire(res, inv, inv_cap, a[1])) != KB16_OK) /* same key: the newer stays */
            goto done;
        rc = writer_put(&w, k[take].b, kl[take], a[take], &idx, &k[take]);
        if (rc != KB16_OK) {
            /* Only overflow is possible: the readers guarantee increasing keys. */
            rc = merge_fail(res, (unsigned)rc, 0, idx);
            goto done;
        }
        for (i = 0; i < 2; i++)
            if ((i == take || c == 0) &&
                (rc = merge_next(res, &r[i], (unsigned)i, &k[i], &kl[i], &a[i], &have[i])) != KB16_OK)
                goto done;
    }
done:
    return merge_end(res, &w, rc);
}

int kb16_merge_n(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, uint8_t *out,
                 size_t out_cap, uint32_t *inv, size_t inv_cap, kb16_merge_result *res)
{
    kb16_reader r[KB16_MAX_RUNS];
    kb16_keybuf k[KB16_MAX_RUNS];
    unsigned kl[KB16_MAX_RUNS];
    uint32_t a[KB16_MAX_RUNS];
    int have[KB16_MAX_RUNS];
    kb16_writer w;
    unsigned i, best;
    int rc = KB16_OK, any;
    size_t idx = 0;

    if (!res)
        return KB16_ERR_ARG;
    memset(res, 0, sizeof *res);
    if (n == 0 || n > KB16_MAX_RUNS || !runs || !lens)
        return merge_fail(res, KB16_ERR_ARG, 0, 0);
    if (!group_ok(group))
        return merge_fail(res, KB16_ERR_BAD_GROUP, 0, 0);
    if (kb16_writer_init(&w, out, out_cap, group) || (!inv && inv_cap))
        return merge_fail(res, KB16_ERR_ARG, 0, 0);
    for (i = 0; i < n; i++)
        if (kb16_reader_init(&r[i], runs[i], lens[i], group))
            return merge_fail(res, KB16_ERR_ARG, 0, 0);

    for (i = 0; i < n; i++) {
        have[i] = reader_step(&r[i], &k[i], &kl[i], &a[i]);
        if (have[i] < 0) {
            rc = merge_fail(res, r[i].err, i, r[i].err_index);
            goto done;
        }
    }
    for (;;) {
        /* Smallest head; on a tie the lowest index (newest run) stays `best`. */
        any = 0;
        best = 0;
        for (i = 0; i < n; i++)
            if (have[i] && (!any || kb16_key_cmp(k[i].b, kl[i], k[best].b, kl[best]) < 0)) {
                best = i;
                any = 1;
            }
        if (!any)
            break;
        rc = writer_put(&w, k[best].b, kl[best], a[best], &idx, &k[best]);
        if (rc != KB16_OK) { /* only overflow: the readers guarantee increasing keys */
            rc = merge_fail(res, (unsigned)rc, 0, idx);
            goto done;
        }
        /* Every older run holding the same key: its address is superseded (run order). */
        for (i = best + 1; i < n; i++)
            if (have[i] && kb16_key_cmp(k[i].b, kl[i], k[best].b, kl[best]) == 0 &&
                ((rc = merge_retire(res, inv, inv_cap, a[i])) != KB16_OK ||
                 (rc = merge_next(res, &r[i], i, &k[i], &kl[i], &a[i], &have[i])) != KB16_OK))
                goto done;
        if ((rc = merge_next(res, &r[best], best, &k[best], &kl[best], &a[best], &have[best])) != KB16_OK)
            goto done;
    }
done:
    return merge_end(res, &w, rc);
}

/* ---- workload generator ----------------------------------------------------------------- */

void kb16_rng_seed(kb16_rng *r, uint32_t seed) { r->s = seed ? seed : 0x9E3779B9u; }

uint32_t kb16_rng_next(kb16_rng *r)
{
    uint32_t x = r->s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return r->s = x;
}

static size_t gen_shared(const kb16_gen_params *p)
{
    size_t m = p->n0 < p->n1 ? p->n0 : p->n1;
    return m * p->overlap_pct / 100;
}

size_t kb16_gen_scratch_slots(const kb16_gen_params *p) { return p->n0 + p->n1 - gen_shared(p); }

static void gen_key(kb16_rng *r, unsigned kind, kb16_key_slot *k)
{
    unsigned i, off = 0, n;
    switch (kind) {
    case KB16_KIND_SHORT: n = 1 + kb16_rng_next(r) % 8; break;
    case KB16_KIND_UNIFORM: n = 1 + kb16_rng_next(r) % 16; break;
    default: /* KB16_KIND_PREFIX */
        memcpy(k->key, "user", 4);
        off = 4;
        n = 4 + 1 + kb16_rng_next(r) % 12;
        break;
    }
    for (i = off; i < n; i++)
        k->key[i] = (uint8_t)(kb16_rng_next(r) >> 24);
    for (; i < KB16_MAX_KEY; i++)
        k->key[i] = 0;
    k->len = (uint8_t)n;
}

static int slot_cmp(const void *a, const void *b)
{
    const kb16_key_slot *x = a, *y = b;
    return kb16_key_cmp(x->key, x->len, y->key, y->len);
}

int kb16_gen_runs(const kb16_gen_params *p, kb16_key_slot *scratch, size_t scratch_slots,
                  uint8_t *run0, size_t cap0, size_t *len0, uint8_t *run1, size_t cap1, size_t *len1)
{
    kb16_rng rng;
    kb16_writer w0, w1;
    size_t shared, total, have = 0, i, idx;
    size_t left_both, left_0, left_1;
    unsigned round;
    int rc;

    if (!p || !len0 || !len1 || p->kind > KB16_KIND_PREFIX || p->overlap_pct > 100)
        return KB16_ERR_ARG;
    shared = gen_shared(p);
    total = p->n0 + p->n1 - shared;
    if (!scratch || scratch_slots < total)
        return KB16_ERR_ARG;
    if ((rc = kb16_writer_init(&w0, run0, cap0, p->group)) != KB16_OK ||
        (rc = kb16_writer_init(&w1, run1, cap1, p->group)) != KB16_OK)
        return rc;
    kb16_rng_seed(&rng, p->seed);

    /* Draw unique keys: fill, sort, drop duplicates, refill. A bounded number of rounds keeps a
     * too-small key space from looping forever. */
    for (round = 0; have < total; round++) {
        size_t j;
        if (round == 64)
            return KB16_ERR_ARG;
        for (i = have; i < total; i++)
            gen_key(&rng, p->kind, &scratch[i]);
        qsort(scratch, total, sizeof *scratch, slot_cmp);
        for (i = 0, j = 0; i < total; i++)
            if (j == 0 || slot_cmp(&scratch[j - 1], &scratch[i]) != 0)
                scratch[j++] = scratch[i];
        have = j;
    }

    /* Sequential selection: each sorted key goes to both runs, run 0 only or run 1 only, with
     * probabilities that give exactly the requested counts. */
    left_both = shared;
    left_0 = p->n0 - shared;
    left_1 = p->n1 - shared;
    for (i = 0; i < total; i++) {
        size_t rem = left_both + left_0 + left_1;
        size_t x = kb16_rng_next(&rng) % rem;
        int in0, in1;
        if (x < left_both) {
            in0 = in1 = 1;
            left_both--;
        } else if (x < left_both + left_0) {
            in0 = 1, in1 = 0;
            left_0--;
        } else {
            in0 = 0, in1 = 1;
            left_1--;
        }
        if (in0 && (rc = kb16_writer_put(&w0, scratch[i].key, scratch[i].len,
                                         p->addr0_base + (uint32_t)w0.keys, &idx)) != KB16_OK)
            return rc;
        if (in1 && (rc = kb16_writer_put(&w1, scratch[i].key, scratch[i].len,
                                         p->addr1_base + (uint32_t)w1.keys, &idx)) != KB16_OK)
            return rc;
    }
    *len0 = kb16_writer_bytes(&w0);
    *len1 = kb16_writer_bytes(&w1);
    return KB16_OK;
}

long kb16_first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;
    /* Word by word while both are aligned (4x fewer loads: the firmware compares 100 KiB runs in DDR),
     * then byte by byte from the first differing word on. */
    if ((((uintptr_t)a | (uintptr_t)b) & 3u) == 0) {
        typedef uint32_t word_alias __attribute__((may_alias));
        const word_alias *wa = (const word_alias *)(const void *)a, *wb = (const word_alias *)(const void *)b;
        while (i + 4 <= n && wa[i / 4] == wb[i / 4])
            i += 4;
    }
    for (; i < n; i++)
        if (a[i] != b[i])
            return (long)i;
    return -1;
}

/* ---- sub-compaction (docs/scaling.md; the model is lsmc/model/split.py, kept step for step equal) ---- */

/* A decoded key with its address (the closing re-encode works on these). */
typedef struct { kb16_keybuf k; uint32_t addr; uint8_t len, cp, slot, opt; } key_rec; /* slot/opt: search path */

#define FIT_MAX_GROUPS 8u /* closing regions of 1, 2, 4, 8 groups; heads up to 8 groups */

enum { OPT_ONE, OPT_TWO, OPT_PAD_ONE, OPT_PAD_TWO };

static unsigned prefix_len(const uint8_t *a, unsigned alen, const uint8_t *b, unsigned blen)
{
    unsigned n = alen < blen ? alen : blen, i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

/* min(8, common prefix with the previous key): the shared length anywhere but at a group start. */
static unsigned cap_prefix(const uint8_t *prev, unsigned plen, const uint8_t *key, unsigned n)
{
    unsigned s = prefix_len(prev, plen, key, n);
    return s < KB16_MAX_PART ? s : KB16_MAX_PART;
}

/* Ways to write a key of n bytes (cp: cap_prefix with the previous key) at `slot`, canonical first:
 * kind[] and the slot after it, next[]. */
static unsigned key_options(unsigned n, unsigned cp, unsigned slot, unsigned g, unsigned kind[4], unsigned next[4])
{
    /* slot < g and g >= 2: the slots after one and two entries without a division (the VexRiscv's divider
     * takes 34 cycles, and the closing's search calls this for every (key, slot) it tries) */
    unsigned s0 = slot ? cp : 0, c = 0, one = slot + 1 == g ? 0 : slot + 1, two = slot + 2 >= g ? slot + 2 - g : slot + 2;
    unsigned pad_two = g == 2 ? 0 : 2;
    int last = slot == g - 1, fits = n - s0 <= KB16_MAX_PART;
    if (fits) {
        kind[c] = OPT_ONE, next[c++] = one;
    } else if (last) {
        kind[c] = OPT_PAD_TWO, next[c++] = pad_two;
    } else {
        kind[c] = OPT_TWO, next[c++] = two;
    }
    if (fits && !last)
        kind[c] = OPT_TWO, next[c++] = two;
    if (last) {
        if (n <= KB16_MAX_PART)
            kind[c] = OPT_PAD_ONE, next[c++] = 1;
        if (fits)
            kind[c] = OPT_PAD_TWO, next[c++] = pad_two;
    }
    return c;
}

static void put_entry(uint8_t *dst, uint32_t hdr, uint32_t addr, const uint8_t *bytes, unsigned n)
{
    unsigned i;
    wr32(dst, hdr);
    wr32(dst + 4, addr);
    for (i = 0; i < 8; i++)
        dst[8 + i] = i < n ? bytes[i] : 0;
}

/* Write a key in the given way at dst (NULL: count only). Returns the number of entries. */
static unsigned emit_key(unsigned kind, const uint8_t *key, unsigned n, unsigned cp, uint32_t addr, unsigned slot,
                         uint8_t *dst)
{
    unsigned s = slot ? cp : 0, e = 0, v;
    if (kind == OPT_ONE) {
        if (dst)
            put_entry(dst, header(s, n - s), addr, key + s, n - s);
        return 1;
    }
    if (kind == OPT_PAD_ONE || kind == OPT_PAD_TWO) {
        if (dst)
            put_entry(dst, KB16_HDR_PAD, 0, 0, 0);
        e++;
        s = 0;
    }
    if (kind == OPT_PAD_ONE) {
        if (dst)
            put_entry(dst + 16 * e, header(0, n), addr, key, n);
        return e + 1;
    }
    v = n - s < KB16_MAX_PART ? n - s : KB16_MAX_PART; /* the virtual entry: key[s .. min(n, s + 8)) */
    if (dst)
        put_entry(dst + 16 * e, KB16_HDR_VIR | header(s, v), 0, key + s, v);
    e++;
    if (dst) {
        if (n <= KB16_MAX_PART)
            put_entry(dst + 16 * e, header(0, n), addr, key, n);
        else
            put_entry(dst + 16 * e, header(KB16_MAX_PART, n - KB16_MAX_PART), addr, key + KB16_MAX_PART,
                      n - KB16_MAX_PART);
    }
    return e + 1;
}

static size_t fit_stride(unsigned g) { return (g + 7) / 8; }
static size_t fit_keys_max(unsigned g) { return (size_t)FIT_MAX_GROUPS * g; }
static size_t fit_work_bytes(unsigned g)
{
    return fit_keys_max(g) * sizeof(key_rec) + (fit_keys_max(g) + 1) * fit_stride(g);
}

size_t kb16_stitch_scratch(unsigned group) { return group_ok(group) ? fit_work_bytes(group) + 8 : 0; }

/* Work area of the closing re-encode inside a caller's scratch (word aligned). */
typedef struct { key_rec *keys; uint8_t *reach; size_t cap; unsigned g; } fit_work;

static int fit_work_init(fit_work *w, void *scratch, size_t cap, unsigned g)
{
    uintptr_t p = ((uintptr_t)scratch + 7u) & ~(uintptr_t)7u;
    if (!scratch || cap < kb16_stitch_scratch(g))
        return 0;
    w->keys = (key_rec *)p;
    w->reach = (uint8_t *)(w->keys + fit_keys_max(g));
    w->cap = fit_keys_max(g);
    w->g = g;
    return 1;
}

/* Append a key to the work area's list (its prefix with the previous one cached). */
static void rec_put(fit_work *w, size_t i, const kb16_keybuf *k, unsigned kl, uint32_t a)
{
    key_rec *r = &w->keys[i];
    key_copy(&r->k, k);
    r->len = (uint8_t)kl;
    r->addr = a;
    r->cp = (uint8_t)(i ? cap_prefix(w->keys[i - 1].k.b, w->keys[i - 1].len, k->b, kl) : 0);
}


/* Closed fit of w->keys[0..n) from slot 0: fills whole groups (a pad fills a last slot). Writes the
 * entries at dst (NULL: count) and returns their number, or (size_t)-1 when no encoding fits.
 * Depth-first over (key, slot) with the options in their order (canonical first) and the states that
 * cannot end a group remembered: the first path found takes the canonical choice wherever the rest can
 * still fill whole groups (the model's backward table gives the same path); the common case walks the
 * canonical path once and changes its last few keys. */
static size_t fit_closed(fit_work *w, size_t n, uint8_t *dst)
{
    unsigned g = w->g, t = 0, c, o, kind[4], next[4];
    size_t i = 0, e = 0, stride = fit_stride(g);
    uint8_t *failed = w->reach;

    memset(failed, 0, (n + 1) * stride);
    if (n)
        w->keys[0].opt = 0;
    for (;;) {
        if (i == n) {
            if (t == 0 || t == g - 1)
                break;
        } else {
            c = key_options(w->keys[i].len, w->keys[i].cp, t, g, kind, next);
            for (o = w->keys[i].opt; o < c && (failed[(i + 1) * stride + next[o] / 8] >> (next[o] % 8) & 1u); o++)
                ;
            if (o < c) {
                w->keys[i].opt = (uint8_t)o;
                w->keys[i].slot = (uint8_t)t;
                t = next[o];
                if (++i < n)
                    w->keys[i].opt = 0;
                continue;
            }
        }
        failed[i * stride + t / 8] |= (uint8_t)(1u << (t % 8)); /* (i, t) cannot end a group */
        if (i == 0)
            return (size_t)-1;
        i--;
        t = w->keys[i].slot;
        w->keys[i].opt++;
    }
    for (i = 0, t = 0; i < n; i++) {
        c = key_options(w->keys[i].len, w->keys[i].cp, t, g, kind, next);
        o = w->keys[i].opt;
        e += emit_key(kind[o], w->keys[i].k.b, w->keys[i].len, w->keys[i].cp, w->keys[i].addr, t,
                      dst ? dst + 16 * e : 0);
        t = next[o];
    }
    if (t == g - 1) {
        if (dst)
            put_entry(dst + 16 * e, KB16_HDR_PAD, 0, 0, 0);
        e++;
    }
    return e;
}

/* Next real key and the index of its first entry (its virtual entry's, if it has one). */
static int next_key_pos(kb16_reader *r, kb16_keybuf *k, unsigned *kl, uint32_t *a, size_t *first)
{
    int rc = reader_step(r, k, kl, a);
    if (rc == 1) {
        size_t real = r->idx - 1;
        *first = real > 0 && (rd32(r->buf + (real - 1) * KB16_ENTRY_BYTES) & KB16_HDR_VIR) ? real - 1 : real;
    }
    return rc;
}

/* Open (canonical) re-encode of a reader's keys [.., end_entry) continuing at slot after prev. */
typedef struct { uint8_t *dst; size_t cap, used, need; } sink; /* dst NULL or full: count only */

static void sink_key(sink *s, unsigned slot, const kb16_keybuf *k, unsigned kl, uint32_t addr,
                     const uint8_t *prev, unsigned plen, unsigned g, unsigned *next_slot)
{
    unsigned kind[4], next[4], e, cp = cap_prefix(prev, plen, k->b, kl);
    key_options(kl, cp, slot, g, kind, next);
    e = emit_key(kind[0], k->b, kl, cp, addr, slot, 0);
    if (s->dst && s->used + 16 * e <= s->cap)
        emit_key(kind[0], k->b, kl, cp, addr, slot, s->dst + s->used);
    else
        s->dst = 0;
    s->used += 16 * e;
    *next_slot = next[0];
}

/* ---- runs seen through their groups ---- */
typedef struct { const uint8_t *buf; size_t n, groups; } run_view;

static int view_init(run_view *v, const uint8_t *buf, size_t len, unsigned g)
{
    v->buf = buf;
    v->n = len / KB16_ENTRY_BYTES;
    v->groups = (v->n + g - 1) / g;
    return len % KB16_ENTRY_BYTES ? KB16_ERR_LENGTH : KB16_OK;
}

static int group_reader(const run_view *v, size_t grp, unsigned g, kb16_reader *r)
{
    size_t start = grp * g, n = v->n - start < g ? v->n - start : g;
    return kb16_reader_init(r, v->buf + start * KB16_ENTRY_BYTES, n * KB16_ENTRY_BYTES, g);
}

/* First key of group grp. A group starts with a real entry or a virtual + real pair, both with no
 * context: read straight from the entries (the search's inner step); anything unusual goes through the
 * checking reader, which names the fault. */
static int group_key(const run_view *v, size_t grp, unsigned g, kb16_keybuf *k, unsigned *kl)
{
    kb16_reader r;
    uint32_t a;
    size_t at = grp * g;
    const uint8_t *e = v->buf + at * KB16_ENTRY_BYTES;
    uint32_t h = rd32(e);
    unsigned u = h & KB16_HDR_UNSHARED_MASK, i;
    int rc;
    if (!(h & ~(KB16_HDR_VIR | KB16_HDR_UNSHARED_MASK)) && u >= 1 && u <= KB16_MAX_PART) {
        if (!(h & KB16_HDR_VIR)) {
            memset(k, 0, sizeof *k);
            for (i = 0; i < u; i++)
                k->b[i] = e[8 + i];
            *kl = u;
            return 0;
        }
        if (at + 1 < v->n) { /* G >= 2: the pair is in one group */
            uint32_t h2 = rd32(e + KB16_ENTRY_BYTES);
            unsigned s2 = (h2 & KB16_HDR_SHARED_MASK) >> KB16_HDR_SHARED_SHIFT, u2 = h2 & KB16_HDR_UNSHARED_MASK;
            if (!(h2 & ~(KB16_HDR_SHARED_MASK | KB16_HDR_UNSHARED_MASK)) && s2 <= u && u2 <= KB16_MAX_PART &&
                s2 + u2 >= 1) {
                memset(k, 0, sizeof *k);
                for (i = 0; i < s2; i++)
                    k->b[i] = e[8 + i];
                for (i = 0; i < u2; i++)
                    k->b[s2 + i] = e[KB16_ENTRY_BYTES + 8 + i];
                *kl = s2 + u2;
                return 0;
            }
        }
    }
    rc = group_reader(v, grp, g, &r);
    if (rc)
        return -rc;
    rc = reader_step(&r, k, kl, &a);
    return rc == 1 ? 0 : (rc < 0 ? rc : -KB16_ERR_VIRTUAL_AT_END);
}

/* Index of the first entry of the first key >= s in a run (n when none). Decode errors: -code. */
static long run_rank(const run_view *v, unsigned g, const uint8_t *s, unsigned slen)
{
    size_t lo = 0, hi = v->groups, first;
    kb16_keybuf k;
    unsigned kl;
    uint32_t a;
    kb16_reader r;
    int rc;
    while (lo < hi) { /* groups [0, lo) start below s */
        size_t mid = lo + (hi - lo) / 2;
        if ((rc = group_key(v, mid, g, &k, &kl)) < 0)
            return rc;
        if (kb16_key_cmp(k.b, kl, s, slen) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    if ((rc = group_reader(v, lo - 1, g, &r)))
        return -rc;
    while ((rc = next_key_pos(&r, &k, &kl, &a, &first)) == 1)
        if (kb16_key_cmp(k.b, kl, s, slen) >= 0)
            return (long)((lo - 1) * g + first);
    if (rc < 0)
        return -(long)r.err;
    return (long)(lo * g < v->n ? lo * g : v->n);
}

static int views_init(run_view *v, const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned g)
{
    unsigned i;
    if (!runs || !lens || n == 0 || n > KB16_MAX_RUNS)
        return KB16_ERR_ARG;
    if (!group_ok(g))
        return KB16_ERR_BAD_GROUP;
    for (i = 0; i < n; i++) {
        if (!runs[i] && lens[i])
            return KB16_ERR_ARG;
        if (view_init(&v[i], runs[i], lens[i], g))
            return KB16_ERR_LENGTH;
    }
    return KB16_OK;
}

static long bytes_below(const run_view *v, unsigned n, unsigned g, const uint8_t *s, unsigned slen, uint64_t *b)
{
    unsigned i;
    *b = 0;
    for (i = 0; i < n; i++) {
        long r = run_rank(&v[i], g, s, slen);
        if (r < 0)
            return r;
        *b += (uint64_t)r * KB16_ENTRY_BYTES;
    }
    return 0;
}

int kb16_split_keys(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, unsigned parts,
                    uint8_t (*keys)[KB16_MAX_KEY], uint8_t *key_lens)
{
    run_view v[KB16_MAX_RUNS];
    size_t total = 0;
    uint64_t t, b, best_d = 0, best_b = 0;
    kb16_keybuf k, best, prev;
    unsigned kl, best_len = 0, prev_len = 0, i, j;
    int rc = views_init(v, runs, lens, n, group), have;
    long e;

    if (rc)
        return rc;
    if (parts == 0 || parts > KB16_MAX_PARTS || (parts > 1 && (!keys || !key_lens)))
        return KB16_ERR_ARG;
    for (i = 0; i < n; i++)
        total += lens[i];
    memset(&prev, 0, sizeof prev);
    for (j = 1; j < parts; j++) {
        /* total * j / parts without a 64-bit division (none in the firmware's runtime) */
        t = (uint64_t)(size_t)(total / parts) * j + (size_t)(total % parts) * j / parts;
        have = 0;
        for (i = 0; i < n; i++) {
            size_t lo = 0, hi = v[i].groups, g2;
            while (lo < hi) { /* smallest group whose first key has >= t bytes below it */
                size_t mid = lo + (hi - lo) / 2;
                if ((e = group_key(&v[i], mid, group, &k, &kl)) < 0 || (e = bytes_below(v, n, group, k.b, kl, &b)) < 0)
                    return (int)-e;
                if (b >= t)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            for (g2 = lo == 0 ? 0 : lo - 1; g2 <= lo && g2 < v[i].groups; g2++) {
                uint64_t d;
                if ((e = group_key(&v[i], g2, group, &k, &kl)) < 0 || (e = bytes_below(v, n, group, k.b, kl, &b)) < 0)
                    return (int)-e;
                d = b > t ? b - t : t - b;
                if (!have || d < best_d || (d == best_d && b < best_b)) {
                    have = 1, best_d = d, best_b = b, best_len = kl;
                    key_copy(&best, &k);
                }
            }
        }
        if (have && kb16_key_cmp(best.b, best_len, prev.b, prev_len) > 0) {
            key_copy(&prev, &best);
            prev_len = best_len;
        }
        memcpy(keys[j - 1], prev.b, KB16_MAX_KEY);
        key_lens[j - 1] = (uint8_t)prev_len;
    }
    return KB16_OK;
}

int kb16_split_keys_fast(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, unsigned parts,
                         uint8_t (*keys)[KB16_MAX_KEY], uint8_t *key_lens)
{
    return kb16_split_keys_skew(runs, lens, n, group, parts, 0, keys, key_lens);
}

int kb16_split_keys_skew(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, unsigned parts,
                         unsigned skew, uint8_t (*keys)[KB16_MAX_KEY], uint8_t *key_lens)
{
    run_view v[KB16_MAX_RUNS];
    kb16_keybuf k;
    unsigned kl, i, j, pivot = 0;
    int rc = views_init(v, runs, lens, n, group);

    if (rc)
        return rc;
    if (parts == 0 || parts > KB16_MAX_PARTS || (parts > 1 && (!keys || !key_lens)))
        return KB16_ERR_ARG;
    for (i = 1; i < n; i++)
        if (lens[i] > lens[pivot])
            pivot = i;
    for (j = 1; j < parts; j++) {
        size_t g = v[pivot].groups / parts * j + v[pivot].groups % parts * j / parts + (size_t)skew * j;
        if (skew && g >= v[pivot].groups && v[pivot].groups) /* keys must not decrease: the last group's */
            g = v[pivot].groups - 1;
        memset(keys[j - 1], 0, KB16_MAX_KEY);
        key_lens[j - 1] = 0;
        if (g < v[pivot].groups) {
            if ((rc = group_key(&v[pivot], g, group, &k, &kl)) < 0)
                return -rc;
            memcpy(keys[j - 1], k.b, KB16_MAX_KEY);
            key_lens[j - 1] = (uint8_t)kl;
        }
    }
    return KB16_OK;
}

size_t kb16_subrun_bytes(const kb16_subrun *s) { return s->head_bytes + (s->tail_end - s->tail_begin) * KB16_ENTRY_BYTES; }

void kb16_subrun_copy(const kb16_subrun *s, const uint8_t *run, uint8_t *dst)
{
    if (s->head_bytes)
        memcpy(dst, s->head, s->head_bytes);
    if (s->tail_end > s->tail_begin)
        memcpy(dst + s->head_bytes, run + s->tail_begin * KB16_ENTRY_BYTES,
               (s->tail_end - s->tail_begin) * KB16_ENTRY_BYTES);
}

size_t kb16_subrun_orig_index(const kb16_subrun *s, size_t x)
{
    size_t h = s->head_bytes / KB16_ENTRY_BYTES;
    return x < h ? s->head_src : s->tail_begin + (x - h);
}

/* The head of a sub-run that starts inside a group (see kb16.h). */
static int plan_head(const run_view *v, unsigned g, size_t p, size_t e, fit_work *w, sink *heads, kb16_subrun *sub,
                     size_t *bad)
{
    size_t gs = p - p % g, gend = gs + g, first, nk = 0, extra, rend = e, at = heads->used;
    kb16_reader r;
    kb16_keybuf k;
    unsigned kl, slot;
    uint32_t a;
    int rc, fitted = 0;

    for (extra = 0; extra < FIT_MAX_GROUPS; extra++) {
        rend = gend + extra * g;
        if (rend >= e)
            break;
        /* keys whose first entry is in [p, rend): read from p's group start (context for shared) */
        kb16_reader_init(&r, v->buf + gs * KB16_ENTRY_BYTES, (rend - gs) * KB16_ENTRY_BYTES, g);
        nk = 0;
        while ((rc = next_key_pos(&r, &k, &kl, &a, &first)) == 1)
            if (gs + first >= p)
                rec_put(w, nk++, &k, kl, a);
        if (rc < 0) {
            *bad = gs + r.err_index;
            return (int)r.err;
        }
        {
            size_t cnt = fit_closed(w, nk, 0);
            if (cnt != (size_t)-1) {
                if (heads->dst && heads->used + 16 * cnt <= heads->cap)
                    fit_closed(w, nk, heads->dst + heads->used);
                else
                    heads->dst = 0;
                heads->used += 16 * cnt;
                fitted = 1;
                break;
            }
        }
    }
    if (!fitted) { /* the whole sub-run, canonical from slot 0 */
        kb16_keybuf prev;
        unsigned plen = 0;
        rend = e;
        kb16_reader_init(&r, v->buf + gs * KB16_ENTRY_BYTES, (e - gs) * KB16_ENTRY_BYTES, g);
        slot = 0;
        while ((rc = next_key_pos(&r, &k, &kl, &a, &first)) == 1)
            if (gs + first >= p) {
                sink_key(heads, slot, &k, kl, a, prev.b, plen, g, &slot);
                key_copy(&prev, &k);
                plen = kl;
            }
        if (rc < 0) {
            *bad = gs + r.err_index;
            return (int)r.err;
        }
    }
    sub->head = heads->dst ? heads->dst + at : 0;
    sub->head_bytes = heads->used - at;
    sub->head_src = p;
    sub->tail_begin = rend;
    sub->tail_end = e;
    return KB16_OK;
}

/* kb16_split_plan's body: the closing's work space at `work` (NULL: the start of scratch, the heads after it). */
static int split_plan(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, unsigned parts,
                      const uint8_t (*keys)[KB16_MAX_KEY], const uint8_t *key_lens, kb16_subrun *sub, uint8_t *scratch,
                      size_t scratch_cap, size_t *scratch_used, void *work_at, size_t work_cap, kb16_merge_result *res)
{
    run_view v[KB16_MAX_RUNS];
    fit_work w;
    sink heads;
    size_t work, bad = 0, total = 0;
    unsigned i, j;
    long prev_e;
    int rc;
    kb16_merge_result dummy;

    res = res ? res : &dummy;
    memset(res, 0, sizeof *res);
    if (scratch_used)
        *scratch_used = 0;
    if ((rc = views_init(v, runs, lens, n, group)))
        return merge_fail(res, (unsigned)rc, 0, 0);
    if (parts == 0 || parts > KB16_MAX_PARTS || !sub || (parts > 1 && (!keys || !key_lens)))
        return merge_fail(res, KB16_ERR_ARG, 0, 0);
    for (i = 0; i < n; i++)
        total += lens[i];
    work = work_at ? 0 : kb16_stitch_scratch(group);
    if (!fit_work_init(&w, work_at ? work_at : scratch, work_at ? work_cap : scratch_cap, group) ||
        (!scratch && work_at)) {
        if (scratch_used) /* a bound: every head is at most 3 entries per key of its sub-run, plus a pad */
            *scratch_used = work + 3 * total + (size_t)parts * n * KB16_ENTRY_BYTES;
        return merge_fail(res, KB16_ERR_SCRATCH, 0, 0);
    }
    heads.dst = scratch + work;
    heads.cap = scratch_cap - work;
    heads.used = 0;
    /* Each split point once per run; the sub-runs tile the run (never a gap or an overlap). Keys increase
     * across a split point: the entries before it in its group were scanned below the split key. */
    for (i = 0; i < n; i++)
        for (j = 0, prev_e = 0; j < parts; j++) {
            long p = prev_e;
            long e = j + 1 == parts ? (long)v[i].n : run_rank(&v[i], group, keys[j], key_lens[j]);
            kb16_subrun *s = &sub[j * n + i];
            if (e < 0)
                return merge_fail(res, (unsigned)-e, i, 0);
            if (e < p)
                e = p;
            prev_e = e;
            if (p == e || p % group == 0) {
                s->head = 0;
                s->head_bytes = 0;
                s->head_src = s->tail_begin = (size_t)p;
                s->tail_end = (size_t)e;
                continue;
            }
            if ((rc = plan_head(&v[i], group, (size_t)p, (size_t)e, &w, &heads, s, &bad)))
                return merge_fail(res, (unsigned)rc, i, bad);
        }
    if (scratch_used)
        *scratch_used = work + heads.used;
    if (!heads.dst)
        return merge_fail(res, KB16_ERR_SCRATCH, 0, 0);
    return KB16_OK;
}

int kb16_split_plan(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, unsigned parts,
                    const uint8_t (*keys)[KB16_MAX_KEY], const uint8_t *key_lens, kb16_subrun *sub,
                    uint8_t *scratch, size_t scratch_cap, size_t *scratch_used, kb16_merge_result *res)
{
    return split_plan(runs, lens, n, group, parts, keys, key_lens, sub, scratch, scratch_cap, scratch_used, 0, 0, res);
}

int kb16_split_plan_work(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, unsigned parts,
                         const uint8_t (*keys)[KB16_MAX_KEY], const uint8_t *key_lens, kb16_subrun *sub,
                         uint8_t *heads, size_t heads_cap, size_t *heads_used, void *work, size_t work_cap,
                         kb16_merge_result *res)
{
    kb16_merge_result dummy;
    if (!work)
        return merge_fail(res ? res : &dummy, KB16_ERR_ARG, 0, 0);
    return split_plan(runs, lens, n, group, parts, keys, key_lens, sub, heads, heads_cap, heads_used, work, work_cap,
                      res);
}

/* Last real key of a run image (decoding its last group). */
static int last_key(const uint8_t *buf, size_t entries, unsigned g, kb16_keybuf *k, unsigned *kl, size_t *bad)
{
    run_view v;
    kb16_reader r;
    kb16_keybuf x;
    unsigned xl;
    uint32_t a;
    int rc;
    if (entries == 0)
        return KB16_OK;
    view_init(&v, buf, entries * KB16_ENTRY_BYTES, g);
    group_reader(&v, v.groups - 1, g, &r);
    while ((rc = reader_step(&r, &x, &xl, &a)) == 1) {
        key_copy(k, &x);
        *kl = xl;
    }
    if (rc < 0) {
        *bad = (v.groups - 1) * g + r.err_index;
        return (int)r.err;
    }
    return KB16_OK;
}

static int close_part(fit_work *w, uint8_t *buf, size_t *n, size_t from, size_t cap, size_t *bad);

/* The stitches' common checks: the group, and the closing's work space in scratch. */
static int stitch_open(kb16_merge_result *res, unsigned group, void *scratch, size_t scratch_cap, fit_work *w)
{
    if (!group_ok(group))
        return merge_fail(res, KB16_ERR_BAD_GROUP, 0, 0);
    if (!fit_work_init(w, scratch, scratch_cap, group))
        return merge_fail(res, KB16_ERR_SCRATCH, 0, 0);
    return KB16_OK;
}

int kb16_stitch(const uint8_t *const *outs, const size_t *out_lens, unsigned parts, unsigned group, uint8_t *out,
                size_t out_cap, void *scratch, size_t scratch_cap, kb16_merge_result *res)
{
    fit_work w;
    size_t n = 0, chunk = 0, bad = 0;
    kb16_keybuf lastk;
    unsigned last_len = 0, j;
    int pending = 0, rc = KB16_OK;
    kb16_merge_result dummy;

    res = res ? res : &dummy;
    memset(res, 0, sizeof *res);
    memset(&lastk, 0, sizeof lastk);
    if (!outs || !out_lens || parts == 0 || (!out && out_cap))
        return merge_fail(res, KB16_ERR_ARG, 0, 0);
    if ((rc = stitch_open(res, group, scratch, scratch_cap, &w)) != KB16_OK)
        return rc;
    for (j = 0; j < parts; j++) {
        size_t m = out_lens[j] / KB16_ENTRY_BYTES;
        if (out_lens[j] % KB16_ENTRY_BYTES || (!outs[j] && m))
            return merge_fail(res, out_lens[j] % KB16_ENTRY_BYTES ? KB16_ERR_LENGTH : KB16_ERR_ARG, j, m);
        if (!pending) {
            if ((n + m) * KB16_ENTRY_BYTES > out_cap) {
                rc = merge_fail(res, KB16_ERR_OUT_OVERFLOW, 0, out_cap / KB16_ENTRY_BYTES);
                goto done;
            }
            if (m)
                memcpy(out + n * KB16_ENTRY_BYTES, outs[j], m * KB16_ENTRY_BYTES);
            n += m;
            if ((rc = last_key(outs[j], m, group, &lastk, &last_len, &bad))) {
                rc = merge_fail(res, (unsigned)rc, j, bad);
                goto done;
            }
        } else { /* the open chunk continues: re-encode this part's keys canonically after it */
            kb16_reader r;
            kb16_keybuf k;
            unsigned kl, slot = (unsigned)(n % group);
            uint32_t a;
            sink s = {out, out_cap, n * KB16_ENTRY_BYTES, 0};
            kb16_reader_init(&r, outs[j], out_lens[j], group);
            while ((rc = reader_step(&r, &k, &kl, &a)) == 1) {
                sink_key(&s, slot, &k, kl, a, lastk.b, last_len, group, &slot);
                key_copy(&lastk, &k);
                last_len = kl;
            }
            if (rc < 0) {
                rc = merge_fail(res, r.err, j, r.err_index);
                goto done;
            }
            if (!s.dst) {
                rc = merge_fail(res, KB16_ERR_OUT_OVERFLOW, 0, out_cap / KB16_ENTRY_BYTES);
                goto done;
            }
            n = s.used / KB16_ENTRY_BYTES;
        }
        if (j + 1 == parts)
            break;
        rc = close_part(&w, out, &n, chunk, out_cap, &bad);
        if (rc == KB16_OK) {
            pending = 0;
            chunk = n;
        } else if (rc == KB16_ERR_OPEN_PART) {
            pending = 1; /* the next part's keys continue this one's encoding */
        } else {
            rc = merge_fail(res, (unsigned)rc, rc == KB16_ERR_OUT_OVERFLOW ? 0 : j,
                            rc == KB16_ERR_OUT_OVERFLOW ? out_cap / KB16_ENTRY_BYTES : bad);
            goto done;
        }
    }
    rc = KB16_OK;
done:
    res->out_entries = n;
    res->out_bytes = n * KB16_ENTRY_BYTES;
    return rc;
}

/* Close the part in buf (n entries, cap bytes) in place: nothing, a pad, or its last 1/2/4/8 groups
 * re-encoded (from entry `from` on at most). Returns KB16_OK with *n updated, KB16_ERR_OPEN_PART,
 * KB16_ERR_OUT_OVERFLOW or a decode error (*bad: entry index). */
static int close_part(fit_work *w, uint8_t *buf, size_t *n, size_t from, size_t cap, size_t *bad)
{
    static const unsigned tries[] = {1, 2, 4, 8};
    unsigned g = w->g, t;
    size_t full = *n / g;
    if (*n % g == 0)
        return KB16_OK;
    if (*n % g == g - 1) {
        if ((*n + 1) * KB16_ENTRY_BYTES > cap)
            return KB16_ERR_OUT_OVERFLOW;
        put_entry(buf + *n * KB16_ENTRY_BYTES, KB16_HDR_PAD, 0, 0, 0);
        ++*n;
        return KB16_OK;
    }
    for (t = 0; t < sizeof tries / sizeof tries[0]; t++) {
        size_t rs = full >= tries[t] - 1 ? (full - (tries[t] - 1)) * g : 0, nk = 0, cnt;
        kb16_reader r;
        kb16_keybuf k;
        unsigned kl;
        uint32_t a;
        int rc;
        if (rs < from)
            rs = from;
        kb16_reader_init(&r, buf + rs * KB16_ENTRY_BYTES, (*n - rs) * KB16_ENTRY_BYTES, g);
        while ((rc = reader_step(&r, &k, &kl, &a)) == 1)
            rec_put(w, nk++, &k, kl, a);
        if (rc < 0) {
            *bad = rs + r.err_index;
            return (int)r.err;
        }
        cnt = fit_closed(w, nk, 0);
        if (cnt != (size_t)-1) {
            if ((rs + cnt) * KB16_ENTRY_BYTES > cap)
                return KB16_ERR_OUT_OVERFLOW;
            fit_closed(w, nk, buf + rs * KB16_ENTRY_BYTES);
            *n = rs + cnt;
            return KB16_OK;
        }
        if (rs == from)
            break;
    }
    return KB16_ERR_OPEN_PART;
}

int kb16_stitch_inplace(uint8_t *const *outs, size_t *lens, const size_t *caps, unsigned parts, unsigned group,
                        void *scratch, size_t scratch_cap, kb16_merge_result *res)
{
    fit_work w;
    size_t total = 0, bad = 0;
    unsigned j;
    int rc;
    kb16_merge_result dummy;

    res = res ? res : &dummy;
    memset(res, 0, sizeof *res);
    if (!outs || !lens || !caps || parts == 0)
        return merge_fail(res, KB16_ERR_ARG, 0, 0);
    if ((rc = stitch_open(res, group, scratch, scratch_cap, &w)) != KB16_OK)
        return rc;
    for (j = 0; j < parts; j++) {
        size_t n = lens[j] / KB16_ENTRY_BYTES;
        if (lens[j] % KB16_ENTRY_BYTES || (!outs[j] && n) || lens[j] > caps[j])
            return merge_fail(res, lens[j] % KB16_ENTRY_BYTES ? KB16_ERR_LENGTH : KB16_ERR_ARG, j, n);
        if (j + 1 < parts && (rc = close_part(&w, outs[j], &n, 0, caps[j], &bad)))
            return merge_fail(res, (unsigned)rc, j, rc == KB16_ERR_OPEN_PART ? 0 : bad);
        lens[j] = n * KB16_ENTRY_BYTES;
        total += n;
    }
    res->out_entries = total;
    res->out_bytes = total * KB16_ENTRY_BYTES;
    return KB16_OK;
}

size_t kb16_subcompact_scratch(const size_t *lens, unsigned n, unsigned group, unsigned parts)
{
    size_t total = 0;
    unsigned i;
    if (!lens || !group_ok(group))
        return 0;
    for (i = 0; i < n; i++)
        total += lens[i];
    /* work area + heads (<= 3 entries per key + a pad) + part outputs (<= 3 entries per key) + one part's
     * contiguous inputs (heads + tails) + the plan's table and alignment */
    return kb16_stitch_scratch(group) + 3 * total + (size_t)parts * n * KB16_ENTRY_BYTES +
           3 * total + (size_t)parts * KB16_ENTRY_BYTES + 4 * total + (size_t)parts * n * KB16_ENTRY_BYTES +
           (size_t)KB16_MAX_PARTS * KB16_MAX_RUNS * sizeof(kb16_subrun) + 64;
}

int kb16_subcompact(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, unsigned parts,
                    const uint8_t (*keys)[KB16_MAX_KEY], const uint8_t *key_lens, uint8_t *out, size_t out_cap,
                    uint32_t *inv, size_t inv_cap, void *scratch, size_t scratch_cap, kb16_merge_result *res)
{
    uint8_t kbuf[KB16_MAX_PARTS][KB16_MAX_KEY], klen[KB16_MAX_PARTS];
    const uint8_t *parts_out[KB16_MAX_PARTS];
    size_t parts_len[KB16_MAX_PARTS], used = 0, nk, bad, total = 0, at;
    const uint8_t *ins[KB16_MAX_RUNS];
    size_t in_lens[KB16_MAX_RUNS];
    uint8_t *base = scratch, *outs, *copy;
    kb16_subrun *sub;
    kb16_merge_result r, keep;
    unsigned j, k;
    int rc;

    if (!res)
        return KB16_ERR_ARG;
    memset(res, 0, sizeof *res);
    if (!runs || !lens || n == 0 || n > KB16_MAX_RUNS || parts == 0 || parts > KB16_MAX_PARTS || !scratch ||
        (!out && out_cap) || (!inv && inv_cap))
        return merge_fail(res, KB16_ERR_ARG, 0, 0);
    if (!group_ok(group))
        return merge_fail(res, KB16_ERR_BAD_GROUP, 0, 0);
    for (k = 0; k < n; k++) { /* whole runs first, in run order: errors as the unsplit merge's model */
        if (!runs[k] && lens[k])
            return merge_fail(res, KB16_ERR_ARG, 0, 0);
        if ((rc = kb16_decode(runs[k], lens[k], group, 0, 0, 0, 0, &nk, &bad)))
            return merge_fail(res, (unsigned)rc, k, bad);
        total += lens[k];
    }
    if (scratch_cap < kb16_subcompact_scratch(lens, n, group, parts))
        return merge_fail(res, KB16_ERR_SCRATCH, 0, kb16_subcompact_scratch(lens, n, group, parts));
    if (!keys) {
        if ((rc = kb16_split_keys(runs, lens, n, group, parts, kbuf, klen)))
            return merge_fail(res, (unsigned)rc, 0, 0);
        keys = (const uint8_t(*)[KB16_MAX_KEY])kbuf;
        key_lens = klen;
    }
    /* scratch: [sub table][plan: work area + heads][part outputs][one part's inputs] */
    at = (((uintptr_t)base + 7u) & ~(uintptr_t)7u) - (uintptr_t)base;
    sub = (kb16_subrun *)(base + at);
    at += (size_t)KB16_MAX_PARTS * KB16_MAX_RUNS * sizeof(kb16_subrun);
    if ((rc = kb16_split_plan(runs, lens, n, group, parts, keys, key_lens, sub, base + at, scratch_cap - at, &used, res)))
        return rc;
    outs = base + at + used;
    copy = outs + 3 * total + (size_t)parts * KB16_ENTRY_BYTES;
    memset(&keep, 0, sizeof keep);
    for (j = 0; j < parts; j++) {
        size_t off = 0, cap_out = 0;
        for (k = 0; k < n; k++) {
            ins[k] = copy + off;
            in_lens[k] = kb16_subrun_bytes(&sub[j * n + k]);
            kb16_subrun_copy(&sub[j * n + k], runs[k], copy + off);
            off += in_lens[k];
            cap_out += 3 * in_lens[k];
        }
        cap_out += KB16_ENTRY_BYTES;
        parts_out[j] = outs;
        rc = kb16_merge_n(ins, in_lens, n, group, outs, cap_out, inv ? inv + keep.inv_count : 0,
                          inv_cap - keep.inv_count, &r);
        if (rc) { /* the runs were checked: only overflows are possible here */
            if (rc == KB16_ERR_INV_OVERFLOW)
                return merge_fail(res, (unsigned)rc, 0, keep.inv_count + r.err_index);
            if (rc == KB16_ERR_OUT_OVERFLOW)
                return merge_fail(res, KB16_ERR_SCRATCH, 0, 0);
            return merge_fail(res, (unsigned)rc, r.err_input,
                              kb16_subrun_orig_index(&sub[j * n + r.err_input], r.err_index));
        }
        parts_len[j] = r.out_bytes;
        outs += r.out_bytes;
        keep.inv_count += r.inv_count;
        keep.out_keys += r.out_keys;
        for (k = 0; k < n; k++)
            keep.in_keys[k] += r.in_keys[k];
    }
    rc = kb16_stitch(parts_out, parts_len, parts, group, out, out_cap, base + at, scratch_cap - at, res);
    keep.status = res->status;
    keep.err_input = res->err_input;
    keep.err_index = res->err_index;
    keep.out_bytes = res->out_bytes;
    keep.out_entries = res->out_entries;
    *res = keep;
    return rc;
}
