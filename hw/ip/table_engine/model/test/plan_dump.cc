// plan_dump JOB.json P: the model's sub-compaction plan (PlanSubcompactions) of a job for P parts, printed as
// the lines the firmware's plan prints (fw/apps/tables/plan.c, parsed by lsmc.sim.te_plan), so that the host
// test compares the two choice for choice; the first line carries the model's counts and its fw_cost
// estimate of the CPU's cycles (cpu_cycles). On an error: the model's error line on stderr, exit 1.
#include <cstdio>
#include <cstdlib>

#include "error.h"
#include "job.h"
#include "subcompaction.h"

using namespace table_engine;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: plan_dump JOB.json PARTS\n");
    return 2;
  }
  const int parts = std::atoi(argv[2]);
  if (parts < 2 || parts > kMaxParts) {
    std::fprintf(stderr, "plan_dump: PARTS must be 2..%d\n", kMaxParts);
    return 2;
  }
  try {
    LoadedJob job = LoadJob(argv[1], 1 << 20);
    SubcompactionPlan p = PlanSubcompactions(job.spec, parts);
    auto u = [](uint64_t x) { return static_cast<unsigned long long>(x); };
    const PlanCost& c = p.cost;
    std::printf("tables: plan parts=%d runs=%zu tables=%llu splits=%zu cpu_cycles=%llu total_bytes=%llu "
                "index_entries=%llu comparisons=%llu compared_bytes=%llu\n",
                parts, job.spec.runs.size(), u(c.tables), p.splits.size(), u(c.cpu_cycles), u(p.total_bytes),
                u(c.index_entries), u(c.comparisons), u(c.compared_bytes));
    for (size_t i = 0; i < p.splits.size(); i++) std::printf("tables: plan split=%zu key=%s\n", i, Hex(p.splits[i]).c_str());
    for (size_t j = 0; j < p.parts.size(); j++) {
      const PartPlan& pp = p.parts[j];
      std::printf("tables: plan part=%zu bytes=%llu windows=%zu\n", j, u(pp.bytes), pp.windows.size());
      for (const RunWindow& w : pp.windows)
        std::printf("tables: plan window part=%zu run=%zu tables=%zu-%zu blocks=%llu-%llu lo_blocks=%llu "
                    "hi_from=%llu bytes=%llu\n", j, w.run, w.first_table, w.last_table, u(w.first_block),
                    u(w.last_block), u(w.lo_blocks), u(w.hi_from), u(w.bytes));
    }
  } catch (const EngineError& e) {
    std::fprintf(stderr, "%s\n", e.Line().c_str());
    return 1;
  }
  return 0;
}
