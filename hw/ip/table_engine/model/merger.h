// The K-way merge: the smallest internal key among the runs' current entries leaves first. Runs are
// given newest first; two runs holding the very same internal key stop the job (KEY_ORDER), so the
// order never depends on a tie rule. The RTL merges `ways` runs per pass and cascades through
// temporary tables beyond that: since the merge is a total order, one pass over all runs yields the
// same stream, and the cascade shows only in the cycle estimate (cycle_model.h).
#ifndef TABLE_ENGINE_MERGER_H
#define TABLE_ENGINE_MERGER_H

#include <memory>
#include <string_view>
#include <vector>

#include "cycle_work.h"
#include "table_reader.h"

namespace table_engine {

class Merger {
 public:
  explicit Merger(std::vector<std::unique_ptr<RunReader>> runs);
  bool Valid() const { return cur_ >= 0; }
  std::string_view key() const { return runs_[cur_]->key(); }
  std::string_view value() const { return runs_[cur_]->value(); }
  void Next();
  // The winners' keys and values as the merge stage's beats (cycle_work.h).
  const cycle_model::MergeWork& work() const { return work_; }

 private:
  void Pick();
  std::vector<std::unique_ptr<RunReader>> runs_;
  int cur_ = -1;
  cycle_model::MergeWork work_;
};

}  // namespace table_engine

#endif
