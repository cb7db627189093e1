/* KB16 encoder, decoder, two-way merge and workload generator (see kb16.h). */
#include "kb16.h"

#include <stdlib.h>
#include <string.h>

static const char *const err_names[] = {
    "NONE", "RESERVED_BITS", "LEN_OVER_8", "SHARED_OVER_PREV", "GROUP_START_SHARED",
    "VIRTUAL_AT_END", "BAD_PAD", "EMPTY_KEY", "NOT_INCREASING", "LENGTH", "FILL_NONZERO",
    "OUT_OVERFLOW", "INV_OVERFLOW", "BAD_GROUP",
};

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
        if (c == 0) { /* same key: keep the newer address, retire the older one */
            if (res->inv_count >= inv_cap) {
                rc = merge_fail(res, KB16_ERR_INV_OVERFLOW, 0, res->inv_count);
                goto done;
            }
            inv[res->inv_count++] = a[1];
        }
        rc = writer_put(&w, k[take].b, kl[take], a[take], &idx, &k[take]);
        if (rc != KB16_OK) {
            /* Only overflow is possible: the readers guarantee increasing keys. */
            rc = merge_fail(res, (unsigned)rc, 0, idx);
            goto done;
        }
        for (i = 0; i < 2; i++) {
            if (i == take || c == 0) {
                res->in_keys[i]++;
                have[i] = reader_step(&r[i], &k[i], &kl[i], &a[i]);
                if (have[i] < 0) {
                    rc = merge_fail(res, r[i].err, (unsigned)i, r[i].err_index);
                    goto done;
                }
            }
        }
    }
done:
    res->out_entries = w.entries;
    res->out_bytes = kb16_writer_bytes(&w);
    res->out_keys = w.keys;
    return rc;
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
            if (have[i] && kb16_key_cmp(k[i].b, kl[i], k[best].b, kl[best]) == 0) {
                if (res->inv_count >= inv_cap) {
                    rc = merge_fail(res, KB16_ERR_INV_OVERFLOW, 0, res->inv_count);
                    goto done;
                }
                inv[res->inv_count++] = a[i];
                res->in_keys[i]++;
                have[i] = reader_step(&r[i], &k[i], &kl[i], &a[i]);
                if (have[i] < 0) {
                    rc = merge_fail(res, r[i].err, i, r[i].err_index);
                    goto done;
                }
            }
        res->in_keys[best]++;
        have[best] = reader_step(&r[best], &k[best], &kl[best], &a[best]);
        if (have[best] < 0) {
            rc = merge_fail(res, r[best].err, best, r[best].err_index);
            goto done;
        }
    }
done:
    res->out_entries = w.entries;
    res->out_bytes = kb16_writer_bytes(&w);
    res->out_keys = w.keys;
    return rc;
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
