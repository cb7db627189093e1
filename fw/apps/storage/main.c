/* storage.elf: SIM_ARG 0 runs the storage flow once and exits with its result; SIM_ARG 1 (and a board)
 * starts the `storage> ` console (`storage`, `nand ...`); SIM_ARG 2 runs the power-cut-safe flow on the
 * runs the host loaded (store.c, docs/storage.md). */
#include "storage.h"

#include <stdio.h>
#include <string.h>

#include "compaction.h"
#include "irq.h"
#include "nandcon.h"
#include "parse.h"
#include "soc.h"
#include "sys.h"
#include "uart.h"

static const storage_cfg default_cfg = {512, 25, 16, 0x5707A6E5u, 2, 1};

#define LINE_CAP 96
#define WORDS_MAX 8

static void console(void)
{
    char line[LINE_CAP], *argv[WORDS_MAX];
    storage_result r;
    uint32_t v;
    printf("storage console: 'storage [entries] [overlap%%] [targets]', 'store', 'nand help', 'exit [code]'\n");
    for (;;) {
        int argc = uart_next_command("storage> ", line, sizeof line, argv, WORDS_MAX);
        if (!strcmp(argv[0], "exit")) {
            if (parse_exit(argc, argv, &v))
                continue;
            sys_exit((int)v);
            return;
        }
        if (!strcmp(argv[0], "storage")) {
            storage_cfg cfg = default_cfg;
            uint32_t n, ov, tg;
            if (argc > 4) {
                printf("usage: storage [entries] [overlap%%] [targets]\n");
                continue;
            }
            if (parse_arg("storage", "entries", argc, argv, 1, 2, 65536, default_cfg.entries, &n) ||
                parse_arg("storage", "overlap%", argc, argv, 2, 0, 100, default_cfg.overlap_pct, &ov) ||
                parse_arg("storage", "targets", argc, argv, 3, 1, STORAGE_MAX_TARGETS, (uint32_t)default_cfg.targets, &tg))
                continue;
            cfg.entries = n;
            cfg.overlap_pct = ov;
            cfg.targets = (int)tg;
            storage_flow_run(&cfg, &r);
        } else if (!strcmp(argv[0], "store")) {
            if (argc > 1)
                printf("usage: store (no arguments: mount the run store, read every run back)\n");
            else
                store_mount();
        } else if (!strcmp(argv[0], "nand")) {
            nand_console(argc, argv);
        } else {
            printf("unknown command '%s' (storage, store, nand, exit)\n", argv[0]);
        }
    }
}

int main(void)
{
    int sim = sys_in_sim();
    uint32_t arg = sys_sim_arg(), version = 0;
    storage_result r;
    if (!sim)
        uart_init(uart_divider_for(CPU_HZ, 115200u));
    uart_crlf = !sim;
    irq_init();
    printf("\nstorage firmware (%s, SIM_ARG %lu)\n", sim ? "simulation" : "board", (unsigned long)arg);
    if (cip_check_id(&version) != 0) {
        printf("storage: FAIL (compaction IP not found)\n");
        return 2;
    }
    cip_soft_reset();
    if (!sim || arg == STORAGE_SCEN_CONSOLE) {
        console();
        return 0;
    }
    if (arg == STORAGE_SCEN_FAULTS)
        return store_faults_flow();
    return storage_flow_run(&default_cfg, &r) == 0 ? 0 : 1;
}
