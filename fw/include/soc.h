/* SoC memory map, interrupt lines, the small peripherals' registers, the firmware's reserved regions
 * and the nominal clock: all GENERATED from hw/soc/map/SocMap.scala by soc.Generate into
 * build/gen/soc/lsmc_soc.h (docs/architecture.md, "Contracts"). Nothing is restated here. */
#ifndef LSMC_FW_SOC_H
#define LSMC_FW_SOC_H

#include "lsmc_soc.h"

#endif
