/* The `nand ...` console commands of the storage app (moved out of the driver: fw/drivers/nand.c keeps
 * driver functions only). */
#ifndef LSMC_NANDCON_H
#define LSMC_NANDCON_H

#include <stdint.h>

#include "nand.h"

/* DDR scratch of the console and the storage flow (parameter page, ID bytes). */
#define NANDCON_SCRATCH 0x4CF00000u

/* argv[0] = "nand", argv[1] = the sub-command; the commands act on channel 0 but `channels`. Every argument is checked (numbers strictly, addresses
 * against the geometry the parameter page gave) before a command reaches the bus; nothing but init,
 * help and regs before `nand init`. Returns 0 or the driver/completion error; a timeout resets the
 * controller and the part (nand_reinit). */
int nand_console(int argc, char **argv);
extern const char nand_console_help[];
/* After a timeout: nand_reinit of `targets` on the channel and one line saying how it went. */
int nandcon_recover(const nand_ch *ch, const char *who, int targets);
int nandcon_is_timeout(int rc);

#endif
