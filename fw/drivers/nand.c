/* ONFI NAND controller driver; see nand.h and hw/ip/nand/doc/nand.md.
 * The register offsets come from the generated nand_regs.h (build/gen/nand or build/gen/soc); the driver
 * is in every firmware, a SoC without NAND answers no channel (nand_channels() == 0). */
#include "nand.h"

#include <string.h>

#include "csr.h"
#include "mmio.h"
#include "soc.h"
#include "timer.h"

#include "nand_regs.h"

/* The flag bits of nand.h are the controller's CMD_CTRL fields (generated). */
_Static_assert(NAND_F_ECC == NAND_CMD_CTRL_ECC_MASK && NAND_F_SPLIT == NAND_CMD_CTRL_SPLIT_MASK &&
               NAND_F_DMA == NAND_CMD_CTRL_DMA_MASK && NAND_F_MPLANE == NAND_CMD_CTRL_MPLANE_MASK,
               "nand.h flags differ from CMD_CTRL");

static nand_chan_state chan_state[NAND_CHANNELS_MAX];
_Static_assert(NAND_CHANNELS_MAX == 4, "nand_chans lists 4 channel slots");
#define CHAN(c) {NAND_CHANNEL_BASE(c), c, &chan_state[c].dev, &chan_state[c].ecc, &chan_state[c]}
const nand_ch nand_chans[NAND_CHANNELS_MAX] = {CHAN(0), CHAN(1), CHAN(2), CHAN(3)};
#undef CHAN

#define CMD_TIMEOUT_CYCLES 50000000ull /* 0.5 s at 100 MHz: far above tBERS max (3 ms) */

/* ONFI async modes 0..5: the one table, hw/ip/nand/data/onfi_timing.json (via onfi_timing.h). */
const nand_onfi_timing nand_onfi_modes[ONFI_ASYNC_MODE_COUNT] = ONFI_ASYNC_MODES;

/* READ ID at address 20h and every parameter page copy start with the ASCII signature "ONFI". */
static const char onfi_signature[4] = {'O', 'N', 'F', 'I'};

/* The signature as READ ID's 4-byte completion word holds it (first byte lowest). */
static uint32_t onfi_signature_word(void)
{
    return (uint32_t)onfi_signature[0] | (uint32_t)onfi_signature[1] << 8 | (uint32_t)onfi_signature[2] << 16 |
           (uint32_t)onfi_signature[3] << 24;
}

int nand_channel_present(int ch)
{
    /* A slot without a controller reads 0: the ID register tells. */
    return ch >= 0 && ch < NAND_CHANNELS_MAX && nand_reg(&nand_chans[ch], NAND_ID) == NAND_ID_MAGIC;
}

int nand_channels(void)
{
    int n = 0;
    while (n < NAND_CHANNELS_MAX && nand_channel_present(n))
        n++;
    return n;
}

#define NAND_E_NAME_(name, code) [code] = #name,
static const char *const err_names[] = {NAND_E_LIST(NAND_E_NAME_)};
const char *nand_err_name(int err)
{
    if (err >= 0 && err < (int)(sizeof err_names / sizeof err_names[0]))
        return err_names[err];
    switch (err) {
    case NAND_DRV_TIMEOUT: return "DRIVER_TIMEOUT";
    case NAND_DRV_CRC: return "PARAM_CRC";
    case NAND_DRV_ID: return "BAD_ID";
    case NAND_DRV_ARG: return "BAD_ARG";
    case NAND_DRV_MODE: return "MODE_NOT_SET";
    default: return "?";
    }
}

/* ceil(ns / clock period), at least 1 cycle. */
static uint32_t cyc(uint32_t clk_hz, unsigned n, const uint16_t *ns)
{
    uint32_t best = 1;
    unsigned i;
    for (i = 0; i < n; i++) {
        uint32_t c = (uint32_t)(((uint64_t)ns[i] * clk_hz + 999999999ull) / 1000000000ull);
        if (c > best)
            best = c;
    }
    return best;
}
#define C(...) cyc(clk_hz, sizeof((uint16_t[]){__VA_ARGS__}) / sizeof(uint16_t), (uint16_t[]){__VA_ARGS__})

void nand_timing_for_mode(int mode, uint32_t clk_hz, nand_timing_regs *o)
{
    const nand_onfi_timing *t = &nand_onfi_modes[mode < 0 ? 0 : mode >= ONFI_ASYNC_MODE_COUNT ? ONFI_ASYNC_MODE_COUNT - 1 : mode];
    o->timing[0] = C(t->tWP, t->tDS) | C(t->tWH, t->tDH, t->tCLH, t->tALH) << 8 | C(t->tWC) << 16 | C(t->tRP) << 24;
    o->timing[1] = C(t->tREH) | C(t->tRC) << 8 | C(t->tCS) << 16 | C(t->tCH, t->tCLH, t->tALH) << 24;
    o->timing[2] = C(t->tCLS, t->tALS) | C(t->tCLR, t->tAR, t->tIR) << 8 | C(t->tWHR) << 16 | C(t->tADL) << 24;
    o->timing[3] = C(t->tRHW, t->tRHZ) | C(t->tRR) << 8 | C(t->tWB) << 16 | C(t->tCCS) << 24;
    /* Sample once tREA has passed: ceil(tREA / Tclk) cycles after the RE# pin fell, +1 for the
     * synchroniser stage the PHY reads from. */
    o->sample = (uint32_t)(((uint64_t)t->tREA * clk_hz + 999999999ull) / 1000000000ull) + 1;
}

/* The timing registers both interfaces load (NV-DDR reuses the SDR layout for its command cycles). */
static void write_timing_regs(const nand_ch *ch, const uint32_t timing[4], uint32_t sample)
{
    nand_reg_write(ch, NAND_TIMING0, timing[0]);
    nand_reg_write(ch, NAND_TIMING1, timing[1]);
    nand_reg_write(ch, NAND_TIMING2, timing[2]);
    nand_reg_write(ch, NAND_TIMING3, timing[3]);
    nand_reg_write(ch, NAND_SAMPLE, sample);
}

int nand_set_mode_regs(const nand_ch *ch, int mode)
{
    nand_timing_regs r;
    if (mode < 0 || mode > 5)
        return NAND_DRV_ARG;
    nand_timing_for_mode(mode, CPU_HZ, &r);
    write_timing_regs(ch, r.timing, r.sample);
    return NAND_OK;
}

/* NV-DDR modes 0..5 (ps): the same table (onfi_timing.h). */
static const struct { ONFI_NVDDR_MEMBERS(uint32_t) } nvddr_modes[ONFI_NVDDR_MODE_COUNT] = ONFI_NVDDR_MODES;
int nand_sdr_only;

static uint32_t cyc_ps(uint32_t clk_hz, uint32_t ps)
{
    uint32_t c = (uint32_t)(((uint64_t)ps * clk_hz + 999999999999ull) / 1000000000000ull);
    return c ? c : 1;
}

void nand_nvddr_for_mode(int mode, uint32_t clk_hz, nand_nvddr_regs *o)
{
    const int m = mode < 0 ? 0 : mode >= ONFI_NVDDR_MODE_COUNT ? ONFI_NVDDR_MODE_COUNT - 1 : mode;
    nand_timing_regs sdr0;
    uint32_t ck, hold;
#define P(f) cyc_ps(clk_hz, nvddr_modes[m].f)
    nand_timing_for_mode(0, clk_hz, &sdr0); /* fields the NV-DDR layer does not read */
    ck = P(tCK);
    hold = P(tCH);
    o->timing[0] = sdr0.timing[0];
    o->timing[1] = (sdr0.timing[1] & 0xFFFFu) | P(tCS) << 16 | hold << 24;
    o->timing[2] = (sdr0.timing[2] & 0xFFFFu) | P(tWHR) << 16 | P(tADL) << 24;
    o->timing[3] = P(tRHW) | P(tRR) << 8 | P(tWB) << 16 | P(tCCS) << 24;
    o->sample = sdr0.sample;
    o->ddr_cfg = NAND_DDR_CFG_DDR_EN_MASK | ck << NAND_DDR_CFG_CK_DIV_SHIFT | P(tCAD) << NAND_DDR_CFG_T_CAD_SHIFT |
                 P(tWRCK) << NAND_DDR_CFG_T_WRCK_SHIFT | P(tDQSHZ) << NAND_DDR_CFG_T_DQSHZ_SHIFT;
    o->ddr_cfg2 = P(tCEH);
#undef P
}

int nand_set_nvddr_regs(const nand_ch *ch, int mode)
{
    nand_nvddr_regs r;
    if (mode < 0 || mode > 5)
        return NAND_DRV_ARG;
    nand_nvddr_for_mode(mode, CPU_HZ, &r);
    write_timing_regs(ch, r.timing, r.sample);
    nand_reg_write(ch, NAND_DDR_CFG2, r.ddr_cfg2);
    nand_reg_write(ch, NAND_DDR_CFG, r.ddr_cfg);
    return NAND_OK;
}

static void submit_at(uint32_t base, const nand_cmd *c, uint16_t tag)
{
    mmio_write32(base + NAND_CMD_CTRL, (uint32_t)c->opcode | (uint32_t)c->target << 8 | c->flags | (uint32_t)tag << 16);
    mmio_write32(base + NAND_CMD_ROW, c->row);
    mmio_write32(base + NAND_CMD_COL, c->col);
    mmio_write32(base + NAND_CMD_LEN, c->len);
    mmio_write32(base + NAND_CMD_DMA, c->dma_addr);
    mmio_write32(base + NAND_CMD_PARAM, c->param);
    mmio_write32(base + NAND_CMD_PUSH, 1);
}

int nand_submit(const nand_ch *ch, const nand_cmd *c)
{
    if (c->target >= NAND_MAX_TARGETS)
        return NAND_DRV_ARG;
    submit_at(ch->base, c, c->tag);
    return NAND_OK;
}

/* Take the completion at the head of the queue of the controller at `base` (info: its COMP_INFO, read
 * already) and count a page read into that channel's ECC statistics `st`. The caller invalidates the
 * data cache before the CPU reads what the command's DMA wrote. */
static void take_completion(uint32_t base, uint32_t info, nand_ecc_stats *st, nand_comp *o)
{
    uint32_t s = mmio_read32(base + NAND_COMP_STATUS);
    o->data = mmio_read32(base + NAND_COMP_DATA);
    o->sectors = mmio_read32(base + NAND_COMP_SECTORS);
    mmio_write32(base + NAND_COMP_POP, 1);
    o->op = info & 15;
    o->err = (info >> 4) & 15;
    o->target = (info >> 8) & 1;
    o->tag = info >> 16;
    o->status = s & 0xFF;
    o->corrected = (s >> 8) & 0xFF;
    o->corr_map = (s >> 16) & 0xFF;
    o->unc_map = s >> 24;
    if (o->op == NAND_OP_PAGE_READ || o->op == NAND_OP_READ_DATA) {
        int i;
        st->reads++;
        st->corrected_bits += o->corrected;
        if (o->err == NAND_E_ECC_UNCORRECTABLE)
            st->uncorrectable++;
        for (i = 0; i < 8; i++) {
            uint8_t n = (o->sectors >> (4 * i)) & 0xF;
            if (n != NAND_SECTOR_UNCORRECTABLE && n > st->max_sector_bits)
                st->max_sector_bits = n;
        }
    }
}

int nand_complete(const nand_ch *ch, nand_comp *o, uint64_t timeout_cycles)
{
    uint64_t deadline = timer_deadline(timeout_cycles);
    while (!(nand_reg(ch, NAND_STATUS) & NAND_STATUS_COMP_VALID_MASK))
        if (timer_expired(deadline))
            return NAND_DRV_TIMEOUT;
    take_completion(ch->base, nand_reg(ch, NAND_COMP_INFO), ch->ecc, o);
    dcache_invalidate(); /* the command may have written DDR behind the data cache */
    return NAND_OK;
}

int nand_exec(const nand_ch *ch, const nand_cmd *c, nand_comp *out)
{
    nand_comp tmp;
    nand_comp *o = out ? out : &tmp;
    int r = nand_submit(ch, c);
    if (r)
        return r;
    r = nand_complete(ch, o, CMD_TIMEOUT_CYCLES);
    return r ? r : o->err;
}

static nand_cmd page_cmd(uint8_t op, int way, uint32_t row, uint32_t flags, uint32_t dma)
{
    nand_cmd c = {0};
    c.opcode = op;
    c.target = (uint8_t)way;
    c.row = row;
    c.flags = flags;
    c.dma_addr = dma;
    return c;
}

/* One command (no DMA, no ECC) built as every other: only LEN and PARAM added. */
static int simple(const nand_ch *ch, uint8_t op, int target, uint32_t row, uint32_t len, uint32_t param, nand_comp *c)
{
    nand_cmd cmd = page_cmd(op, target, row, 0, 0);
    cmd.len = len;
    cmd.param = param;
    return nand_exec(ch, &cmd, c);
}

int nand_reset(const nand_ch *ch, int target)
{
    if (nand_reg(ch, NAND_DDR_CFG) & NAND_DDR_CFG_DDR_EN_MASK) {
        /* The targets speak NV-DDR: RESET them in it (an SDR write cycle would be CLK edges to them), SPLIT
         * so that CE# is high when they come back in SDR mode 0; then the controller follows and
         * WAIT_STATUS (SDR) collects each reset. */
        int t, r = 0, rt;
        for (t = 0; t < NAND_MAX_TARGETS; t++) {
            nand_cmd cmd = page_cmd(NAND_OP_RESET, t, 0, NAND_F_SPLIT, 0);
            if ((rt = nand_exec(ch, &cmd, NULL)) != 0 && !r)
                r = rt;
        }
        nand_reg_write(ch, NAND_DDR_CFG, 0);
        nand_set_mode_regs(ch, 0);
        for (t = 0; t < NAND_MAX_TARGETS; t++)
            if ((rt = simple(ch, NAND_OP_WAIT_STATUS, t, 0, 0, 0, NULL)) != 0 && !r)
                r = rt;
        ch->dev->mode = 0;
        ch->dev->nvddr = 0;
        return r;
    }
    /* RESET returns the flash to timing mode 0: the controller must be there first. */
    nand_set_mode_regs(ch, 0);
    ch->dev->mode = 0;
    return simple(ch, NAND_OP_RESET, target, 0, 0, 0, NULL);
}

/* A new DDR_CAPTURE setting; the ECP5 wrapper walks its DELAYFs one tap per two cycles: let them arrive. */
static void capture_set(const nand_ch *ch, uint32_t word)
{
    uint64_t settle = timer_deadline(2u * NAND_TRAIN_TAPS);
    nand_reg_write(ch, NAND_DDR_CAPTURE, word);
    while (!timer_expired(settle))
        ;
}

int nand_train_capture(const nand_ch *ch, int target, int32_t *first, int32_t *last, uint32_t *word)
{
    const int32_t half = (int32_t)(500000000000ull / CPU_HZ), tp = (int32_t)NAND_TRAIN_TAP_PS;
    const uint32_t slots = NAND_DDR_CAPTURE_SLOT_MASK >> NAND_DDR_CAPTURE_SLOT_SHIFT;
    uint32_t taps = NAND_TRAIN_TAPS, slot, k, tap = 0;
    int32_t lo = 0, hi = 0, mid, d;
    int found = 0, done = 0;
    nand_comp c;
    if ((uint32_t)((half + tp - 1) / tp) < taps) /* a line longer than half a cycle only repeats positions */
        taps = (uint32_t)((half + tp - 1) / tp);
    /* increasing sample position: slot by slot, each slot's taps from the top down */
    for (slot = 0; slot <= slots && !done; slot++) {
        for (k = (taps - 1) / NAND_TRAIN_STEP + 1; k-- > 0 && !done;) {
            int32_t p = (int32_t)slot * half - (int32_t)(k * NAND_TRAIN_STEP) * tp;
            int ok;
            capture_set(ch, slot << NAND_DDR_CAPTURE_SLOT_SHIFT | k * NAND_TRAIN_STEP);
            ok = simple(ch, NAND_OP_READ_ID, target, 0x20, 4, 0, &c) == 0 && c.data == onfi_signature_word() &&
                 !(nand_reg(ch, NAND_DDR_CAPTURE) & NAND_DDR_CAPTURE_PAIR_SPLIT_MASK);
            if (ok) {
                if (!found)
                    lo = p;
                found = 1;
                hi = p;
            } else if (found) {
                done = 1;
            }
        }
    }
    if (!found)
        return NAND_DRV_MODE;
    /* the reachable setting nearest the run's middle: in the first slot reaching it, or the top of the
     * slot before when the middle falls in the gap between two slots' ranges */
    mid = lo + (hi - lo) / 2;
    slot = mid <= 0 ? 0 : (uint32_t)((mid + half - 1) / half);
    if (slot > slots)
        slot = slots;
    d = ((int32_t)slot * half - mid + tp / 2) / tp;
    if (d < 0)
        d = 0;
    if ((uint32_t)d <= taps - 1) {
        tap = (uint32_t)d;
    } else if (slot > 0 && mid - (int32_t)(slot - 1) * half < (int32_t)slot * half - (int32_t)(taps - 1) * tp - mid) {
        slot--;
        tap = 0;
    } else {
        tap = taps - 1;
    }
    capture_set(ch, slot << NAND_DDR_CAPTURE_SLOT_SHIFT | tap);
    if (first)
        *first = lo;
    if (last)
        *last = hi;
    if (word)
        *word = slot << NAND_DDR_CAPTURE_SLOT_SHIFT | tap;
    return NAND_OK;
}

int nand_read_status(const nand_ch *ch, int target, nand_comp *c) { return simple(ch, NAND_OP_READ_STATUS, target, 0, 1, 0, c); }

int nand_read_id(const nand_ch *ch, int target, uint32_t buf, uint8_t id[5])
{
    /* Five ID bytes: DMA them (the completion carries only the first four). */
    nand_cmd cmd = {0};
    uint32_t w0, w1;
    int r;
    cmd.opcode = NAND_OP_READ_ID;
    cmd.target = (uint8_t)target;
    cmd.len = 5;
    cmd.flags = NAND_F_DMA;
    cmd.dma_addr = buf;
    if ((r = nand_exec(ch, &cmd, NULL)) != 0)
        return r;
    w0 = mmio_read32(buf);
    w1 = mmio_read32(buf + 4);
    id[0] = (uint8_t)w0; id[1] = (uint8_t)(w0 >> 8); id[2] = (uint8_t)(w0 >> 16); id[3] = (uint8_t)(w0 >> 24);
    id[4] = (uint8_t)w1;
    return NAND_OK;
}

static uint16_t crc16_onfi(const uint8_t *p, unsigned n)
{
    uint16_t crc = 0x4F4E;
    unsigned i, b;
    for (i = 0; i < n; i++) {
        crc ^= (uint16_t)p[i] << 8;
        for (b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x8005) : (uint16_t)(crc << 1);
    }
    return crc;
}

static uint32_t le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

int nand_read_param(const nand_ch *ch, int target, uint32_t buf, nand_info *info)
{
    nand_cmd cmd = {0};
    uint8_t p[256];
    int r, copy, i;
    cmd.opcode = NAND_OP_READ_PARAM;
    cmd.target = (uint8_t)target;
    cmd.len = 768;
    cmd.flags = NAND_F_DMA;
    cmd.dma_addr = buf;
    r = nand_exec(ch, &cmd, NULL);
    if (r)
        return r;
    for (copy = 0; copy < 3; copy++) {
        for (i = 0; i < 256; i += 4) {
            uint32_t w = mmio_read32(buf + 256 * copy + i);
            p[i] = w; p[i + 1] = w >> 8; p[i + 2] = w >> 16; p[i + 3] = w >> 24;
        }
        info->crc = (uint16_t)(p[254] | p[255] << 8);
        if (memcmp(p, onfi_signature, sizeof onfi_signature) == 0 && crc16_onfi(p, 254) == info->crc)
            break;
    }
    if (copy == 3)
        return NAND_DRV_CRC;
    memcpy(info->manufacturer, p + 32, 12);
    info->manufacturer[12] = 0;
    memcpy(info->model, p + 44, 20);
    info->model[20] = 0;
    for (i = 11; i >= 0 && info->manufacturer[i] == ' '; i--)
        info->manufacturer[i] = 0;
    for (i = 19; i >= 0 && info->model[i] == ' '; i--)
        info->model[i] = 0;
    info->page_bytes = le32(p + 80);
    info->spare_bytes = p[84] | p[85] << 8;
    info->pages_per_block = le32(p + 92);
    info->blocks = le32(p + 96);
    info->row_cycles = p[101] & 15;
    info->col_cycles = p[101] >> 4;
    info->ecc_bits = p[112];
    info->modes = (uint16_t)(p[129] | p[130] << 8);
    info->features = (uint16_t)(p[6] | p[7] << 8);
    info->nvddr_modes = (info->features & NAND_FEATURE_NVDDR) ? (uint16_t)(p[141] | p[142] << 8) : 0;
    info->planes = (info->features & NAND_FEATURE_MULTIPLANE) ? 1 << (p[113] & 15) : 1;
    return NAND_OK;
}

int nand_init(const nand_ch *ch, nand_info *info, int targets, uint32_t buf)
{
    int t, r, mode, nvddr;
    uint16_t modes = 0x3F, ddr_modes = 0x3F;
    uint32_t p1;
    nand_comp c;
    if (targets < 1 || targets > NAND_MAX_TARGETS)
        return NAND_DRV_ARG;
    memset(info, 0, sizeof *info);
    memset(ch->ecc, 0, sizeof *ch->ecc);
    memset(ch->st->bbt, 0, sizeof ch->st->bbt);
    nand_reg_write(ch, NAND_CTRL, NAND_CTRL_WP_N_MASK);
    for (t = 0; t < targets; t++) {
        nand_info ti;
        if ((r = nand_reset(ch, t)) != 0)
            return r;
        if ((r = nand_read_id(ch, t, buf, ti.id)) != 0)
            return r;
        if ((r = nand_read_param(ch, t, buf, &ti)) != 0)
            return r;
        if (t == 0) {
            *info = ti;
        } else if (memcmp(ti.id, info->id, 5) || ti.page_bytes != info->page_bytes) {
            return NAND_DRV_ID; /* one geometry per channel */
        }
        modes &= ti.modes;
        ddr_modes &= ti.nvddr_modes;
    }
    if (info->row_cycles != 3 || info->col_cycles != 2 || info->page_bytes + info->spare_bytes > nand_reg(ch, NAND_BUF_BYTES))
        return NAND_DRV_ID; /* the controller issues 2 column + 3 row cycles */
    nvddr = ddr_modes && !nand_sdr_only;
    if (nvddr)
        modes = ddr_modes;
    for (mode = 5; mode > 0 && !(modes & (1u << mode)); mode--)
        ;
    /* SET FEATURES 01h (timing mode), P1 = interface (bits 5:4, 1 = NV-DDR) | mode; sent in SDR mode 0,
     * effective after tFEAT (the command's busy time) */
    p1 = (nvddr ? 0x10u : 0u) | (uint32_t)mode;
    for (t = 0; t < targets && p1; t++) {
        if ((r = simple(ch, NAND_OP_SET_FEATURES, t, 0x01, 0, p1, NULL)) != 0)
            return r;
    }
    if (nvddr) {
        nand_set_nvddr_regs(ch, mode);
        if ((r = nand_train_capture(ch, 0, NULL, NULL, NULL)) != 0)
            return r;
    } else {
        nand_set_mode_regs(ch, mode);
    }
    for (t = 0; t < targets; t++) {
        if ((r = simple(ch, NAND_OP_GET_FEATURES, t, 0x01, 4, 0, &c)) != 0)
            return r;
        if ((c.data & 0x3F) != p1)
            return NAND_DRV_MODE;
    }
    nand_reg_write(ch, NAND_GEOMETRY, info->page_bytes | info->spare_bytes << 16);
    info->mode = mode;
    info->nvddr = nvddr;
    info->targets = targets;
    *ch->dev = *info;
    return NAND_OK;
}

int nand_erase(const nand_ch *ch, int target, uint32_t block, nand_comp *c)
{
    int r = simple(ch, NAND_OP_ERASE, target, block * ch->dev->pages_per_block, 0, 0, c);
    if (r == NAND_E_NAND_FAIL)
        nand_bbt_mark(ch, target, block); /* an erase failure retires the block */
    return r;
}

static int xfer(const nand_ch *ch, uint8_t op, int target, uint32_t row, uint32_t addr, uint32_t len, int ecc, nand_comp *c)
{
    nand_cmd cmd = {0};
    cmd.opcode = op;
    cmd.target = (uint8_t)target;
    cmd.row = row;
    cmd.len = ecc ? 0 : len;
    cmd.flags = NAND_F_DMA | (ecc ? NAND_F_ECC : 0);
    cmd.dma_addr = addr;
    return nand_exec(ch, &cmd, c);
}

int nand_program(const nand_ch *ch, int target, uint32_t row, uint32_t addr, uint32_t len, int ecc, nand_comp *c)
{
    return xfer(ch, NAND_OP_PROGRAM, target, row, addr, len, ecc, c);
}

int nand_read(const nand_ch *ch, int target, uint32_t row, uint32_t addr, uint32_t len, int ecc, nand_comp *c)
{
    int r = xfer(ch, NAND_OP_PAGE_READ, target, row, addr, len, ecc, c), i;
    for (i = 0; ecc && r == NAND_E_ECC_UNCORRECTABLE && i < NAND_READ_RETRIES; i++) {
        ch->ecc->retries++;
        r = xfer(ch, NAND_OP_PAGE_READ, target, row, addr, len, ecc, c);
        if (r == 0)
            ch->ecc->recovered++;
    }
    return r;
}

void nand_bbt_mark(const nand_ch *ch, int target, uint32_t block)
{
    if (target >= 0 && target < NAND_MAX_TARGETS && block < NAND_BBT_BLOCKS)
        ch->st->bbt[target][block / 32] |= 1u << (block % 32);
}

int nand_block_bad(const nand_ch *ch, int target, uint32_t block)
{
    if (target < 0 || target >= NAND_MAX_TARGETS || block >= NAND_BBT_BLOCKS)
        return 1;
    return (ch->st->bbt[target][block / 32] >> (block % 32)) & 1;
}

/* Factory marker (first spare byte of pages 0 and 1 not FFh): *bad = 1. */
static int marker_bad(const nand_ch *ch, int target, uint32_t block, int *bad)
{
    int p, r;
    *bad = 0;
    for (p = 0; p < 2 && !*bad; p++) {
        nand_cmd cmd = {0};
        nand_comp c;
        cmd.opcode = NAND_OP_PAGE_READ;
        cmd.target = (uint8_t)target;
        cmd.row = block * ch->dev->pages_per_block + (uint32_t)p;
        cmd.col = ch->dev->page_bytes;
        cmd.len = 1;
        if ((r = nand_exec(ch, &cmd, &c)) != 0)
            return r;
        *bad = (c.data & 0xFF) != 0xFF;
    }
    return NAND_OK;
}

int nand_bbt_scan(const nand_ch *ch, int target, uint32_t blocks, uint32_t *n_bad)
{
    uint32_t b, n = 0;
    int r, bad;
    if (blocks > NAND_BBT_BLOCKS)
        return NAND_DRV_ARG;
    for (b = 0; b < blocks; b++) {
        if ((r = marker_bad(ch, target, b, &bad)) != 0)
            return r;
        if (bad)
            nand_bbt_mark(ch, target, b);
        n += (uint32_t)nand_block_bad(ch, target, b);
    }
    if (n_bad)
        *n_bad = n;
    return NAND_OK;
}

int nand_scan_bad(const nand_ch *ch, int target, uint8_t *bad, uint32_t blocks, uint32_t *n_bad)
{
    uint32_t b, n = 0;
    int r, m;
    for (b = 0; b < blocks; b++) {
        if ((r = marker_bad(ch, target, b, &m)) != 0)
            return r;
        bad[b] = (uint8_t)m;
        n += bad[b];
    }
    if (n_bad)
        *n_bad = n;
    return NAND_OK;
}

void nand_forget(const nand_ch *ch) { memset(ch->dev, 0, sizeof *ch->dev); }

int nand_reinit(const nand_ch *ch, int targets, uint32_t buf)
{
    int rc;
    nand_reg_write(ch, NAND_CTRL, 1u << NAND_CTRL_SOFT_RESET_SHIFT);
    rc = nand_init(ch, ch->dev, targets, buf);
    if (rc)
        nand_forget(ch);
    return rc;
}

/* ---------------------------------------------------------------- channels x ways scheduler */
/* nand_chans[ch].base, computed as the map places it: the scheduler's loops index channels by number
 * and a table load per access would cost more than the shift and add. */
static inline uint32_t chan_base(int ch) { return NAND_CHANNEL_BASE(ch); }
nand_sched_stats nand_sched_last;

int nand_run_channels(nand_chan_prog *p, int depth, uint64_t timeout_cycles, nand_sched_err *err,
                      void (*on_comp)(int ch, uint32_t index, const nand_comp *c, void *ctx), void *ctx)
{
    int ch, stop = 0, rc = 0;
    uint64_t deadline, t_in, t_last;
    err->channel = -1;
    memset(&nand_sched_last, 0, sizeof nand_sched_last);
    if (depth < 1 || depth > 8)
        return NAND_DRV_ARG;
    for (ch = 0; ch < NAND_CHANNELS_MAX; ch++) {
        p[ch].submitted = p[ch].completed = 0;
        p[ch].last = 0;
        if (p[ch].n && (!nand_channel_present(ch) || nand_chans[ch].dev->page_bytes == 0 || p[ch].n > 0x10000u))
            return NAND_DRV_ARG;
    }
    deadline = timer_deadline(timeout_cycles);
    for (;;) {
        uint32_t ready = 0;
        int busy = 0;
        /* keep every channel's queue `depth` deep */
        for (ch = 0; ch < NAND_CHANNELS_MAX; ch++) {
            nand_chan_prog *c = &p[ch];
            while (!stop && c->submitted < c->n && c->submitted - c->completed < (uint32_t)depth) {
                submit_at(chan_base(ch), &c->cmds[c->submitted], (uint16_t)c->submitted);
                c->submitted++;
            }
            busy |= c->submitted != c->completed;
        }
        if (!busy) {
            dcache_invalidate(); /* once for every page the DMA wrote (see the drain below) */
            return rc;
        }
        /* wait for the first channel with a completion (one COMP_INFO read per busy channel); the
         * passes that found none are the CPU's idle time (nand_sched_last) */
        t_in = t_last = deadline - timeout_cycles;
        nand_sched_last.rounds++;
        while (!ready) {
            for (ch = 0; ch < NAND_CHANNELS_MAX; ch++)
                if (p[ch].submitted != p[ch].completed &&
                    (mmio_read32(chan_base(ch) + NAND_COMP_INFO) & NAND_COMP_INFO_C_VALID_MASK))
                    ready |= 1u << ch;
            if (!ready) {
                nand_sched_last.idle_polls++;
                if ((t_last = timer_now()) >= deadline) {
                    dcache_invalidate();
                    return NAND_DRV_TIMEOUT;
                }
            }
        }
        nand_sched_last.idle_cycles += t_last - t_in;
        /* drain those channels' completions. The whole data cache is invalidated only before a callback
         * and at the end, not per completion: with four channels the per-completion invalidation and the
         * refills of the scheduler's own data after it were the CPU's limit (hw/ip/nand/doc/nand.md). */
        for (ch = 0; ch < NAND_CHANNELS_MAX; ch++) {
            uint32_t base = chan_base(ch), info, taken = 0;
            if (!(ready >> ch & 1u))
                continue;
            while (p[ch].completed < p[ch].submitted &&
                   ((info = mmio_read32(base + NAND_COMP_INFO)) & NAND_COMP_INFO_C_VALID_MASK)) {
                nand_comp c;
                take_completion(base, info, &chan_state[ch].ecc, &c);
                p[ch].completed++;
                taken++;
                if (c.err != NAND_E_OK && !rc) {
                    rc = c.err;
                    stop = 1; /* no new commands anywhere; what is queued is still collected */
                    err->channel = ch;
                    err->index = c.tag;
                    err->comp = c;
                }
                if (on_comp) {
                    dcache_invalidate();
                    on_comp(ch, c.tag, &c, ctx);
                }
            }
            p[ch].last = timer_now(); /* one timer read per drained channel, not per completion */
            nand_sched_last.completions += taken;
        }
        deadline = timer_deadline(timeout_cycles);
    }
}

static int seq_args(const nand_ch *ch, uint32_t cap, int ways, uint32_t pages, uint32_t block, uint32_t need)
{
    return ch->dev->page_bytes && ways >= 1 && ways <= ch->dev->targets && pages >= 1 &&
           pages <= ch->dev->pages_per_block && block < ch->dev->blocks && need <= cap;
}

int nand_cache_read_cmds(const nand_ch *ch, nand_cmd *out, uint32_t cap, int ways, uint32_t pages, uint32_t block, uint32_t dma,
                         uint32_t way_stride)
{
    uint32_t n = 0, q, row0 = block * ch->dev->pages_per_block;
    int t;
    if (!seq_args(ch, cap, ways, pages, block, (uint32_t)NAND_CACHE_READ_CMDS(ways, pages)))
        return NAND_DRV_ARG;
#define CACHE(t, q) page_cmd((q) + 1 < pages ? NAND_OP_READ_CACHE : NAND_OP_READ_CACHE_END, t, 0, NAND_F_SPLIT, 0)
    for (t = 0; t < ways; t++)
        out[n++] = page_cmd(NAND_OP_PAGE_READ, t, row0, NAND_F_SPLIT, 0);
    for (t = 0; t < ways; t++)
        out[n++] = CACHE(t, 0u);
    for (q = 0; q < pages; q++)
        for (t = 0; t < ways; t++) {
            out[n++] = page_cmd(NAND_OP_READ_DATA, t, 0, NAND_F_ECC | NAND_F_DMA,
                                dma + (uint32_t)t * way_stride + q * ch->dev->page_bytes);
            if (q + 1 < pages)
                out[n++] = CACHE(t, q + 1);
        }
#undef CACHE
    return (int)n;
}

int nand_cache_program_cmds(const nand_ch *ch, nand_cmd *out, uint32_t cap, int ways, uint32_t pages, uint32_t block, uint32_t dma,
                            uint32_t way_stride)
{
    uint32_t n = 0, q;
    int t;
    if (!seq_args(ch, cap, ways, pages, block, (uint32_t)NAND_CACHE_PROGRAM_CMDS(ways, pages)))
        return NAND_DRV_ARG;
    for (q = 0; q < pages; q++)
        for (t = 0; t < ways; t++) {
            if (q)
                out[n++] = page_cmd(NAND_OP_WAIT_STATUS, t, 0, 0, 0);
            out[n++] = page_cmd(q + 1 == pages ? NAND_OP_PROGRAM : NAND_OP_PROGRAM_CACHE, t,
                                block * ch->dev->pages_per_block + q, NAND_F_ECC | NAND_F_DMA | NAND_F_SPLIT,
                                dma + (uint32_t)t * way_stride + q * ch->dev->page_bytes);
        }
    for (t = 0; t < ways; t++)
        out[n++] = page_cmd(NAND_OP_WAIT_STATUS, t, 0, 0, 0);
    return (int)n;
}

static int mp_args(const nand_ch *ch, uint32_t cap, int ways, uint32_t pages, uint32_t block, uint32_t need)
{
    uint32_t planes = (uint32_t)ch->dev->planes;
    return planes >= 2 && block % planes == 0 && pages % planes == 0 && block + planes <= ch->dev->blocks &&
           seq_args(ch, cap, ways, pages / planes, block, need);
}

int nand_mp_program_cmds(const nand_ch *ch, nand_cmd *out, uint32_t cap, int ways, uint32_t pages, uint32_t block, uint32_t dma,
                         uint32_t way_stride)
{
    uint32_t n = 0, q, k, planes = (uint32_t)ch->dev->planes, ppb = ch->dev->pages_per_block;
    int t;
    if (!mp_args(ch, cap, ways, pages, block, planes ? (uint32_t)NAND_MP_PROGRAM_CMDS(ways, pages, planes) : 0))
        return NAND_DRV_ARG;
    for (q = 0; q < pages / planes; q++)
        for (t = 0; t < ways; t++) {
            if (q)
                out[n++] = page_cmd(NAND_OP_WAIT_STATUS, t, 0, 0, 0);
            for (k = 0; k < planes; k++)
                out[n++] = page_cmd(k + 1 < planes || q + 1 == pages / planes ? NAND_OP_PROGRAM : NAND_OP_PROGRAM_CACHE,
                                    t, (block + k) * ppb + q,
                                    NAND_F_ECC | NAND_F_DMA | (k + 1 < planes ? NAND_F_MPLANE : NAND_F_SPLIT),
                                    dma + (uint32_t)t * way_stride + (q * planes + k) * ch->dev->page_bytes);
        }
    for (t = 0; t < ways; t++)
        out[n++] = page_cmd(NAND_OP_WAIT_STATUS, t, 0, 0, 0);
    return (int)n;
}

int nand_mp_read_cmds(const nand_ch *ch, nand_cmd *out, uint32_t cap, int ways, uint32_t pages, uint32_t block, uint32_t dma,
                      uint32_t way_stride)
{
    uint32_t n = 0, q, k, planes = (uint32_t)ch->dev->planes, ppb = ch->dev->pages_per_block;
    /* the PAGE_READs still to place, one after each READ_DATA (the reference's `pending`) */
    nand_cmd pend[NAND_MAX_PLANES];
    uint32_t npend = 0, head = 0;
    int t;
    if (!mp_args(ch, cap, ways, pages, block, (uint32_t)NAND_MP_READ_CMDS(ways, pages)) || planes > NAND_MAX_PLANES)
        return NAND_DRV_ARG;
#define READ(t, k, q) page_cmd(NAND_OP_PAGE_READ, t, (block + (k)) * ppb + (q), (k) + 1 < planes ? NAND_F_MPLANE : NAND_F_SPLIT, 0)
    for (t = 0; t < ways; t++)
        for (k = 0; k < planes; k++)
            out[n++] = READ(t, k, 0u);
    for (q = 0; q < pages / planes; q++)
        for (t = 0; t < ways; t++) {
            while (head < npend && pend[head].target == t) /* one way: its reads before its data */
                out[n++] = pend[head++];
            for (k = 0; k < planes; k++) {
                out[n++] = page_cmd(NAND_OP_READ_DATA, t, (block + k) * ppb + q, NAND_F_ECC | NAND_F_DMA | NAND_F_MPLANE,
                                    dma + (uint32_t)t * way_stride + (q * planes + k) * ch->dev->page_bytes);
                if (head < npend) {
                    out[n++] = pend[head++];
                } else if (k + 1 == planes && q + 1 < pages / planes) {
                    uint32_t j;
                    out[n++] = READ(t, 0u, q + 1);
                    for (j = 1, head = 0, npend = 0; j < planes; j++)
                        pend[npend++] = READ(t, j, q + 1);
                }
            }
        }
    while (head < npend)
        out[n++] = pend[head++];
#undef READ
    return (int)n;
}

