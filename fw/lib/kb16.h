/* KB16 key-block format (docs: /work/shared/spec/kb16-format.md, docs/architecture.md) in portable C.
 *
 * No hardware, no allocation, no libc beyond memcpy/memcmp/memset: the same file runs on the
 * VexRiscv (the software baseline of the firmware) and natively on the host (tests, baselines).
 * Error codes are the compaction IP's STATUS.ERR_CODE values, so software and hardware results
 * compare directly. */
#ifndef LSMC_KB16_H
#define LSMC_KB16_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KB16_ENTRY_BYTES 16u
#define KB16_MAX_KEY 16u
#define KB16_MAX_PART 8u /* shared_len / unshared_len limit */
#define KB16_MIN_GROUP 2u
#define KB16_MAX_GROUP 256u
#define KB16_MAX_RUNS 32u /* inputs of one kb16_merge_n */

/* Header bits. */
#define KB16_HDR_UNSHARED_MASK 0x0Fu
#define KB16_HDR_SHARED_SHIFT 4u
#define KB16_HDR_SHARED_MASK 0xF0u
#define KB16_HDR_VIR (1u << 8)
#define KB16_HDR_PAD (1u << 9)
#define KB16_HDR_RESERVED 0xFFFFFC00u

/* Error codes: the IP's STATUS.ERR_CODE values, KB16_ERR_<NAME> for every code of kb16_errors.h
 * (rendered into the build tree from hw/ip/compaction/data/kb16_errors.json, their one source). */
#include "kb16_errors.h"
#define KB16_ERR_ENUM_(name, code) KB16_ERR_##name = code,
typedef enum {
    KB16_ERROR_LIST(KB16_ERR_ENUM_)
    KB16_OK = KB16_ERR_NONE,
    /* Software-only codes (never produced by the IP). */
    KB16_ERR_KEY_TOO_LONG = 64, /* encoder given a key over 16 bytes */
    KB16_ERR_ARG = 65,          /* NULL pointer or impossible argument */
    KB16_ERR_SCRATCH = 66,      /* sub-compaction: scratch memory too small (the needed size is returned) */
    KB16_ERR_OPEN_PART = 67     /* kb16_stitch_inplace: a part cannot be closed in place (use kb16_stitch) */
} kb16_err;

/* Name of an error code ("NONE", "RESERVED_BITS", ..., "UNKNOWN"). */
const char *kb16_err_name(unsigned code);

/* Lexicographic unsigned compare, a proper prefix sorts first. <0, 0, >0. */
int kb16_key_cmp(const uint8_t *a, unsigned alen, const uint8_t *b, unsigned blen);

/* A key buffer that can be copied as four words. */
typedef union { uint8_t b[KB16_MAX_KEY]; uint32_t w[KB16_MAX_KEY / 4]; } kb16_keybuf;

/* ---- decoder: streaming reader of one run ------------------------------------------------- */
typedef struct {
    const uint8_t *buf;
    size_t len;        /* declared byte length of the run */
    size_t n_entries;  /* whole entries: len / 16 */
    size_t idx;        /* next entry index */
    unsigned group;
    unsigned slot;     /* idx % group, kept incrementally */
    kb16_keybuf prev;  /* previous decoded key (real or virtual) */
    unsigned prev_len;
    kb16_keybuf last_real;
    unsigned last_real_len;
    int have_real;
    int after_vir;     /* the previous entry was virtual: the next one must be real */
    unsigned err;      /* sticky error code once an error was reported */
    size_t err_index;  /* entry index of the offender */
} kb16_reader;

/* Returns KB16_OK, or KB16_ERR_BAD_GROUP / KB16_ERR_ARG. */
int kb16_reader_init(kb16_reader *r, const uint8_t *buf, size_t len, unsigned group);
/* Next real key of the run. Returns 1 with key/key_len/addr set, 0 at the end of the run, or
 * -code on malformed input (then r->err / r->err_index tell the code and entry index; sticky). */
int kb16_reader_next(kb16_reader *r, uint8_t key[KB16_MAX_KEY], unsigned *key_len, uint32_t *addr);

/* Decode a whole run. keys: key_cap slots of 16 bytes, lens/addrs: key_cap slots (any may be NULL
 * when key_cap is 0, then only validation and counting happen). *n_keys gets the number of real
 * keys (also counted past key_cap). Returns KB16_OK or the error code; *err_index the entry index. */
int kb16_decode(const uint8_t *buf, size_t len, unsigned group, uint8_t (*keys)[KB16_MAX_KEY],
                uint8_t *lens, uint32_t *addrs, size_t key_cap, size_t *n_keys, size_t *err_index);

/* ---- canonical encoder ------------------------------------------------------------------ */
typedef struct {
    uint8_t *out;
    size_t cap;        /* bytes available in out */
    size_t entries;    /* entries written so far (real + virtual + pad) */
    size_t keys;       /* real keys written */
    unsigned group;
    unsigned slot;     /* entries % group, kept incrementally */
    kb16_keybuf prev;  /* previous key written (the writer only writes real keys after virtual ones) */
    unsigned prev_len;
    int have_key;      /* a previous key exists (for the ordering check) */
} kb16_writer;

int kb16_writer_init(kb16_writer *w, uint8_t *out, size_t cap, unsigned group);
/* Append a key (1..16 bytes, strictly greater than the previous one). Returns KB16_OK,
 * KB16_ERR_OUT_OVERFLOW (*err_index = output entry index that did not fit; nothing written for it),
 * KB16_ERR_EMPTY_KEY, KB16_ERR_KEY_TOO_LONG or KB16_ERR_NOT_INCREASING. */
int kb16_writer_put(kb16_writer *w, const uint8_t *key, unsigned key_len, uint32_t addr, size_t *err_index);
static inline size_t kb16_writer_bytes(const kb16_writer *w) { return w->entries * KB16_ENTRY_BYTES; }

/* Encode n keys (keys[i] points at lens[i] bytes). *out_len gets the bytes written. */
int kb16_encode(const uint8_t *const *keys, const uint8_t *lens, const uint32_t *addrs, size_t n,
                unsigned group, uint8_t *out, size_t out_cap, size_t *out_len, size_t *err_index);

/* ---- two-way merge (run0 newer, run1 older) ------------------------------------------------ */
typedef struct {
    unsigned status;      /* kb16_err: KB16_OK or the first error met */
    unsigned err_input;   /* 0/1 for input errors; 0 for output overflows */
    size_t err_index;     /* entry index in that input, output entry index, or address index */
    size_t out_bytes;     /* bytes written to out (whole entries, also on error) */
    size_t out_entries;   /* entries written (real + virtual + pad) */
    size_t out_keys;      /* real keys written */
    size_t inv_count;     /* invalid addresses written */
    size_t in_keys[KB16_MAX_RUNS]; /* real keys consumed from each input */
} kb16_merge_result;

/* Merge two canonical or non-canonical (but well-formed) runs with group size G into a canonical
 * run in out (out_cap bytes) and the superseded addresses of run1 into inv (inv_cap words).
 * Stops at the first malformed entry or overflow, like the IP. Returns res->status. */
int kb16_merge(const uint8_t *run0, size_t len0, const uint8_t *run1, size_t len1, unsigned group,
               uint8_t *out, size_t out_cap, uint32_t *inv, size_t inv_cap, kb16_merge_result *res);

/* ---- N-way merge (runs[0] newest .. runs[n-1] oldest), 1 <= n <= KB16_MAX_RUNS ------------------
 * For a key held by several runs the newest run's address is kept and the others go to inv, for each
 * key in key order, from the next-newest run to the oldest. Errors as kb16_merge (err_input names
 * the run, 0..n-1); n == 0 or n > KB16_MAX_RUNS is KB16_ERR_ARG. */
int kb16_merge_n(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, uint8_t *out,
                 size_t out_cap, uint32_t *inv, size_t inv_cap, kb16_merge_result *res);

/* ---- sub-compaction: one N-way merge split by key range into M parts (docs/scaling.md) ------------
 * The way RocksDB splits a compaction across max_subcompactions threads: split keys s_1 <= .. <= s_{M-1}
 * (s_0 = before every key, s_M = after every key); part j merges, from every run, the keys in
 * [s_j, s_{j+1}). The parts run independently (one per compaction unit, or kb16_merge_n), and
 *   - the parts' invalid-address streams, concatenated in part order, ARE the single merge's stream;
 *   - kb16_stitch concatenates the parts' outputs into one valid run that decodes to the single merge's
 *     (key, address) sequence. Each part is canonical from its own group start; a part whose output does
 *     not end on a group boundary is closed: G-1 entries get a pad (canonical), any other fill re-encodes
 *     the part's last groups with the spec's freedom (a virtual entry before a real one, a pad in a
 *     group's last slot) to exactly fill its last group. The result is byte-identical to the single
 *     merge's output when every split key is the first key of an output group of the single merge
 *     (always for M = 1); otherwise it differs only in how groups are cut, never in keys or addresses.
 *
 * Input side: part j reads run i from entry p (the first entry of the first key >= s_j; a key's virtual
 * entry belongs to it) to the p of part j+1. When p is not a group start the part needs a re-encoded
 * head in scratch: the keys from p to a later group boundary, the first one written in full, filling
 * whole groups (the same closing rule), then the original entries resume at that boundary. So a sub-run
 * is up to two segments: head (scratch) then tail (the original run's bytes [tail_begin, tail_end) in
 * entries). Give the unit both segments back to back (two DMA descriptors of one input) or copy them
 * with kb16_subrun_copy; entry indices the unit reports translate back with kb16_subrun_orig_index. */
#define KB16_MAX_PARTS 16u

typedef struct {
    const uint8_t *head;  /* re-encoded head in scratch, or NULL */
    size_t head_bytes;    /* bytes of head (a multiple of 16; whole groups unless the tail is empty) */
    size_t head_src;      /* original entry index where the head's keys start (p) */
    size_t tail_begin;    /* original entries [tail_begin, tail_end) follow the head */
    size_t tail_end;
} kb16_subrun;

/* Bytes of a sub-run (head + tail). */
size_t kb16_subrun_bytes(const kb16_subrun *s);
/* Copy head + tail of run `run` (the original run the plan was made from) into dst (kb16_subrun_bytes). */
void kb16_subrun_copy(const kb16_subrun *s, const uint8_t *run, uint8_t *dst);
/* Original entry index of entry x of the sub-run (x in the head: head_src, where its keys start). */
size_t kb16_subrun_orig_index(const kb16_subrun *s, size_t x);

/* Split keys balanced by input bytes: for j = 1..parts-1 the group-start key (of any run) whose count of
 * input bytes below it is nearest total*j/parts (ties: fewer bytes, then lower run, then earlier group);
 * keys never decrease (a repeated key makes an empty part). keys: parts-1 slots of 16 bytes, key_lens
 * parts-1 (a length 0 key sorts before every key). Runs are not fully validated here (the merges do).
 * Returns KB16_OK, KB16_ERR_ARG (parts 0 or > KB16_MAX_PARTS, n 0 or > KB16_MAX_RUNS) or BAD_GROUP. */
int kb16_split_keys(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, unsigned parts,
                    uint8_t (*keys)[KB16_MAX_KEY], uint8_t *key_lens);

/* The cheap split for the firmware: the largest run's (ties: lowest index) group-start keys at groups
 * groups*j/parts, j = 1..parts-1 (parts-1 group-start decodes, nothing else). Parts are balanced by bytes
 * when the runs' keys are alike in distribution (a run's keys drawn from the same key space); otherwise
 * use kb16_split_keys, which measures (about N^2 log^2 group decodes plus a group scan per step: on the
 * host 1.1 M instructions for 2 runs of 131,072 entries and 4 parts, against 124 M for the merge). */
int kb16_split_keys_fast(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, unsigned parts,
                         uint8_t (*keys)[KB16_MAX_KEY], uint8_t *key_lens);
/* kb16_split_keys_fast with split j at group groups*j/parts + skew*j of the largest run (at most its last
 * group); with skew = one DRAM bank row in groups, the parts' streams in each run start in successive
 * banks (docs/scaling.md). */
int kb16_split_keys_skew(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, unsigned parts,
                         unsigned skew, uint8_t (*keys)[KB16_MAX_KEY], uint8_t *key_lens);

/* Per part and run the sub-run for these split keys: sub[j * n + i] (parts * n slots). Heads go to
 * scratch (scratch_cap bytes); *scratch_used gets the bytes used, or on KB16_ERR_SCRATCH the bytes
 * that suffice. A malformed entry met while re-encoding a head, or keys that decrease across a split
 * point, fill res (status, err_input = run, err_index = original entry index) and return its code. */
int kb16_split_plan(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, unsigned parts,
                    const uint8_t (*keys)[KB16_MAX_KEY], const uint8_t *key_lens, kb16_subrun *sub,
                    uint8_t *scratch, size_t scratch_cap, size_t *scratch_used, kb16_merge_result *res);

/* kb16_split_plan with the closing's work space (kb16_stitch_scratch(group) bytes) at `work`, apart from the
 * heads' scratch (`heads`, which then holds the heads only): e.g. the work space in on-chip RAM, where the
 * CPU's many small stores are cheap, and the heads in DDR, where the DMA reads them. */
int kb16_split_plan_work(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, unsigned parts,
                         const uint8_t (*keys)[KB16_MAX_KEY], const uint8_t *key_lens, kb16_subrun *sub,
                         uint8_t *heads, size_t heads_cap, size_t *heads_used, void *work, size_t work_cap,
                         kb16_merge_result *res);

/* Work space kb16_stitch needs for group G (the closing re-encode of up to 8 groups). */
size_t kb16_stitch_scratch(unsigned group);

/* Concatenate the parts' outputs (in part order) into out as one valid run, closing every part but the
 * last (see above). Returns KB16_OK, KB16_ERR_OUT_OVERFLOW, KB16_ERR_SCRATCH, KB16_ERR_ARG, or a decode
 * error of a part's output (res: err_input = part, err_index = entry index in that part). res gets
 * out_bytes / out_entries / out_keys. */
int kb16_stitch(const uint8_t *const *outs, const size_t *out_lens, unsigned parts, unsigned group, uint8_t *out,
                size_t out_cap, void *scratch, size_t scratch_cap, kb16_merge_result *res);

/* kb16_stitch without the copy: each part's output stays in its buffer outs[j] (caps[j] bytes; closing
 * adds at most G-1 entries) and is closed in place, lens[j] updated; the run is the concatenation of the
 * buffers' first lens[j] bytes, the same bytes kb16_stitch writes when every part can be closed within
 * its last 8 groups. When one cannot (keys with no freedom left), KB16_ERR_OPEN_PART with
 * res->err_input = that part, parts before it already closed (closing is idempotent: kb16_stitch on the
 * same buffers then gives its usual result). Cost: the closing regions only. */
int kb16_stitch_inplace(uint8_t *const *outs, size_t *lens, const size_t *caps, unsigned parts, unsigned group,
                        void *scratch, size_t scratch_cap, kb16_merge_result *res);

/* The whole sub-compaction in software (split keys, plan, kb16_merge_n per part, stitch): the reference
 * the unit-driven version is checked against, and its CPU fallback. keys/key_lens: parts-1 split keys,
 * or NULL to use kb16_split_keys. scratch: at least kb16_subcompact_scratch bytes. res as kb16_merge_n
 * (errors name the original run and entry index). */
size_t kb16_subcompact_scratch(const size_t *lens, unsigned n, unsigned group, unsigned parts);
int kb16_subcompact(const uint8_t *const *runs, const size_t *lens, unsigned n, unsigned group, unsigned parts,
                    const uint8_t (*keys)[KB16_MAX_KEY], const uint8_t *key_lens, uint8_t *out, size_t out_cap,
                    uint32_t *inv, size_t inv_cap, void *scratch, size_t scratch_cap, kb16_merge_result *res);

/* ---- seeded workload generator ------------------------------------------------------------ */
typedef enum {
    KB16_KIND_SHORT = 0,   /* 1..8 random bytes: never needs a virtual entry */
    KB16_KIND_UNIFORM = 1, /* 1..16 random bytes */
    KB16_KIND_PREFIX = 2   /* common 4-byte prefix + 1..12 random bytes: exercises sharing */
} kb16_kind;

/* xorshift32 (Marsaglia); a zero seed is replaced so the state never sticks at 0. */
typedef struct { uint32_t s; } kb16_rng;
void kb16_rng_seed(kb16_rng *r, uint32_t seed);
uint32_t kb16_rng_next(kb16_rng *r);

typedef struct {
    unsigned kind;         /* kb16_kind */
    uint32_t seed;
    size_t n0, n1;         /* keys in run 0 (newer) and run 1 (older) */
    unsigned overlap_pct;  /* percent of min(n0, n1) keys present in both runs */
    unsigned group;
    uint32_t addr0_base;   /* address of run0's i-th key = addr0_base + i (likewise run1) */
    uint32_t addr1_base;
} kb16_gen_params;

/* Work space of the generator: one 20-byte slot per unique key (n0 + n1 - shared); word-sized so
 * that sorting moves words. */
typedef struct { uint8_t key[KB16_MAX_KEY]; uint8_t len; uint8_t reserved[3]; } kb16_key_slot;
size_t kb16_gen_scratch_slots(const kb16_gen_params *p);

/* Generate two sorted runs and encode them canonically into run0/run1. Returns KB16_OK or an error
 * (KB16_ERR_ARG for bad parameters or scratch too small, KB16_ERR_OUT_OVERFLOW when a run buffer
 * is too small). Deterministic for given parameters on every platform. */
int kb16_gen_runs(const kb16_gen_params *p, kb16_key_slot *scratch, size_t scratch_slots,
                  uint8_t *run0, size_t cap0, size_t *len0, uint8_t *run1, size_t cap1, size_t *len1);

/* Index of the first byte where a and b differ in their first n bytes, or -1 (result checks). */
long kb16_first_diff(const uint8_t *a, const uint8_t *b, size_t n);

#ifdef __cplusplus
}
#endif
#endif
