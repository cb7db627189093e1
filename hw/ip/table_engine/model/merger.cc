#include "merger.h"

#include "error.h"
#include "internal_key.h"

namespace table_engine {

Merger::Merger(std::vector<std::unique_ptr<RunReader>> runs) : runs_(std::move(runs)) { Pick(); }

void Merger::Next() {
  runs_[cur_]->Next();
  Pick();
}

void Merger::Pick() {
  cur_ = -1;
  for (int i = 0; i < int(runs_.size()); i++) {
    if (!runs_[i]->Valid()) continue;
    if (cur_ < 0) {
      cur_ = i;
      continue;
    }
    int c = CompareInternal(runs_[i]->key(), runs_[cur_]->key());
    if (c == 0)
      throw EngineError(ErrorCode::kKeyOrder, runs_[i]->table(), runs_[i]->offset(),
                        "internal key also in run " + std::to_string(cur_) + " (" + runs_[cur_]->table() + ")");
    if (c < 0) cur_ = i;
  }
  if (cur_ >= 0) work_.Entry(runs_[cur_]->key().size(), runs_[cur_]->value().size());
}

}  // namespace table_engine
