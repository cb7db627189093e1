// lsmc compaction offload hook for LevelDB 1.23 (docs/leveldb.md). Compiled inside LevelDB's tree
// (the repo's patch adds this file to the `leveldb` target); talks to the device only through the
// driver's C ABI (host/include/lsmc_offload.h).
#ifndef LSMC_LEVELDB_HOOK_H_
#define LSMC_LEVELDB_HOOK_H_

#include "db/dbformat.h"

namespace leveldb {

class Compaction;
class Iterator;
class TableCache;
struct Options;

namespace lsmc {

// Called by DBImpl::DoCompactionWork with the mutex released. `input` is LevelDB's own merging
// iterator over the compaction's inputs. Returns the iterator the (unchanged) compaction loop reads:
// `input` itself when the compaction falls back to the CPU path (the reason is counted and logged),
// or a stream of the same internal entries rebuilt from the device's merge (then `input` is deleted,
// after being compared entry by entry with the device's stream when LSMC_OFFLOAD_VERIFY=1).
Iterator* OffloadCompaction(const void* db, const Options& options, const Comparator* user_comparator,
                            TableCache* table_cache, Compaction* c, SequenceNumber smallest_snapshot,
                            Iterator* input);

// Called by ~DBImpl: appends this DB's counts to LSMC_OFFLOAD_LOG (if set) and forgets them.
void OffloadDbClosed(const void* db);

}  // namespace lsmc
}  // namespace leveldb

#endif  // LSMC_LEVELDB_HOOK_H_
