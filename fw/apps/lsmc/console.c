/* UART console: `lsmc> ` prompt, one command per line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "parse.h"
#include "regs.h"
#include "soc.h"
#include "sys.h"
#include "uart.h"

#define LINE_MAX 96
#define ARGS_MAX 6

static const char help_text[] =
    "commands:\n"
    "  help                 this text\n"
    "  run N [overlap%] [G] [R] [U]  one job of N entries (two runs of N/2 short keys), checked against\n"
    "                       the C merge; with R runs and U units: U jobs of R runs (N/(U*R) keys each) at\n"
    "                       once on U units through the task queue, cascaded when R exceeds the units' ways\n"
    "  bench [tight|paper|host]  Table III (512 .. 8192 entries): workloads generated on the CPU with this\n"
    "                       project's bracket (tight) or Peng et al.'s (paper), or the host-loaded ones\n"
    "  errtest              error paths: malformed input, overflows, short DMA buffer, timeout\n"
    "  job                  run the job the host loaded at DDR 0x40000000 (docs/firmware.md)\n"
    "  regs                 dump the compaction IP and DMA registers\n"
    "  reset                soft reset of the compaction IP\n"
    "  mode [irq|poll]      how the firmware waits for the IP\n"
    "  exit [code]          end (simulation: exit code 0..255)\n";

void regs_dump(void)
{
    static const struct { const char *name; uint32_t off; } cip_regs[] = {
        {"ENCODER_DATA_OUT_CNT", CIP_ENCODER_DATA_OUT_CNT}, {"INVALID_ADDR_OUT_CNT", CIP_INVALID_ADDR_OUT_CNT},
        {"KEY0_ENTRY_IN_CNT", CIP_KEY0_ENTRY_IN_CNT},       {"KEY1_ENTRY_IN_CNT", CIP_KEY1_ENTRY_IN_CNT},
        {"COUNT_CONTROL", CIP_COUNT_CONTROL},               {"THROUGHPUT_COUNTER", CIP_THROUGHPUT_COUNTER},
        {"ID", CIP_ID},                                     {"VERSION", CIP_VERSION},
        {"GROUP", CIP_GROUP},                               {"STATUS", CIP_STATUS},
        {"ERR_INDEX", CIP_ERR_INDEX},                       {"IRQ_ENABLE", CIP_IRQ_ENABLE},
        {"IRQ_STATUS", CIP_IRQ_STATUS},                     {"IN0_BYTES", CIP_IN0_BYTES},
        {"IN1_BYTES", CIP_IN1_BYTES},                       {"OUT_CAPACITY", CIP_OUT_CAPACITY},
        {"INV_CAPACITY", CIP_INV_CAPACITY},                 {"HW_CYCLES", CIP_HW_CYCLES},
        {"OUT_KEYS", CIP_OUT_KEYS},
    };
    unsigned i, ch;
    uint32_t st = cip_read(CIP_STATUS);

    printf("compaction IP @ 0x%08lx:\n", (unsigned long)CIP_BASE);
    for (i = 0; i < sizeof cip_regs / sizeof cip_regs[0]; i++)
        printf("  %02lx %-22s 0x%08lx\n", (unsigned long)cip_regs[i].off, cip_regs[i].name,
               (unsigned long)cip_read(cip_regs[i].off));
    printf("  STATUS: %s%s%s code %lu (%s) input %lu\n", (st & (1u << CIP_STATUS_BUSY_SHIFT)) ? "BUSY " : "",
           (st & (1u << CIP_STATUS_DONE_SHIFT)) ? "DONE " : "", (st & (1u << CIP_STATUS_ERROR_SHIFT)) ? "ERROR " : "",
           (unsigned long)((st & CIP_STATUS_ERR_CODE_MASK) >> CIP_STATUS_ERR_CODE_SHIFT),
           kb16_err_name((st & CIP_STATUS_ERR_CODE_MASK) >> CIP_STATUS_ERR_CODE_SHIFT),
           (unsigned long)((st >> CIP_STATUS_ERR_INPUT_SHIFT) & 1u));
    for (ch = 0; ch < DMA_CHANNELS; ch++) {
        uint32_t s = dma_reg(ch, DMA_CH_STATUS);
        printf("dma%u: ADDR 0x%08lx LEN %lu STATUS 0x%08lx (code %lu %s) BYTES %lu IRQ_EN 0x%lx IRQ_ST 0x%lx\n", ch,
               (unsigned long)dma_reg(ch, DMA_CH_ADDR), (unsigned long)dma_reg(ch, DMA_CH_LEN), (unsigned long)s,
               (unsigned long)((s & DMA_CH_STATUS_ERR_CODE_MASK) >> DMA_CH_STATUS_ERR_CODE_SHIFT),
               dma_err_name((s & DMA_CH_STATUS_ERR_CODE_MASK) >> DMA_CH_STATUS_ERR_CODE_SHIFT),
               (unsigned long)dma_reg(ch, DMA_CH_BYTES), (unsigned long)dma_reg(ch, DMA_CH_IRQ_ENABLE),
               (unsigned long)dma_reg(ch, DMA_CH_IRQ_STATUS));
    }
}

static int no_args(int argc, char **argv)
{
    if (argc > 1) {
        printf("usage: %s (no arguments; got '%s')\n", argv[0], argv[1]);
        return -1;
    }
    return 0;
}

void console_run(void)
{
    char line[LINE_MAX];
    char *argv[ARGS_MAX];
    uint32_t v, ov, g;

    printf("type 'help' for commands\n");
    for (;;) {
        int argc = uart_next_command("lsmc> ", line, sizeof line, argv, ARGS_MAX);
        if (!strcmp(argv[0], "help")) {
            if (!no_args(argc, argv))
                fputs(help_text, stdout);
        } else if (!strcmp(argv[0], "run")) {
            bench_cfg cfg = BENCH_CFG_TABLE3;
            bench_row row;
            uint32_t nr, nu;
            if (argc < 2 || argc > 6) {
                printf("usage: run N [overlap%%] [G] [R] [U]\n");
                continue;
            }
            if (parse_arg("run", "N (entries)", argc, argv, 1, 2, BENCH_MAX_ENTRIES, 0, &v) ||
                parse_arg("run", "overlap%", argc, argv, 2, 0, 100, 25, &ov) ||
                parse_arg("run", "G", argc, argv, 3, KB16_MIN_GROUP, KB16_MAX_GROUP, 16, &g) ||
                parse_arg("run", "R (runs)", argc, argv, 4, 2, KB16_MAX_RUNS, 2, &nr) ||
                parse_arg("run", "U (units)", argc, argv, 5, 1, UNITS_MAX, 1, &nu))
                continue;
            if (nr == 2 && nu == 1) { /* today's job: two runs on unit 0 with the Table III bracket */
                cfg.overlap_pct = (unsigned)ov;
                cfg.group = (unsigned)g;
                bench_run_one((unsigned)v, &cfg, &row, 1);
            } else {
                scale_run_console((unsigned)v, (unsigned)ov, (unsigned)g, (unsigned)nr, (unsigned)nu);
            }
        } else if (!strcmp(argv[0], "bench")) {
            if (argc > 2 || (argc == 2 && strcmp(argv[1], "tight") && strcmp(argv[1], "paper") && strcmp(argv[1], "host"))) {
                printf("usage: bench [tight|paper|host]\n");
                continue;
            }
            if (argc == 2 && !strcmp(argv[1], "host"))
                bench_host_table();
            else
                bench_table_bracket(bench_sizes_table3, 5,
                                    argc == 2 && !strcmp(argv[1], "paper") ? CIP_BRACKET_PAPER : CIP_BRACKET_TIGHT);
        } else if (!strcmp(argv[0], "errtest")) {
            if (!no_args(argc, argv))
                errtest_run();
        } else if (!strcmp(argv[0], "job")) {
            if (!no_args(argc, argv))
                job_run(1);
        } else if (!strcmp(argv[0], "regs")) {
            if (!no_args(argc, argv))
                regs_dump();
        } else if (!strcmp(argv[0], "reset")) {
            if (!no_args(argc, argv))
                printf("soft reset: %s\n", cip_soft_reset() == CIP_OK ? "ok" : "TIMEOUT (IP still busy)");
        } else if (!strcmp(argv[0], "mode")) {
            if (argc > 2 || (argc == 2 && strcmp(argv[1], "irq") && strcmp(argv[1], "poll"))) {
                printf("usage: mode [irq|poll]\n");
                continue;
            }
            if (argc == 2)
                app_use_irq = !strcmp(argv[1], "irq");
            printf("mode: %s\n", app_use_irq ? "irq" : "poll");
        } else if (!strcmp(argv[0], "exit")) {
            if (parse_exit(argc, argv, &v))
                continue;
            sys_exit((int)v);
            return; /* host-test builds only: sys_exit returns there */
        } else {
            printf("unknown command '%s' (try 'help')\n", argv[0]);
        }
    }
}
