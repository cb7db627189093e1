// lsmc compaction offload hook for LevelDB 1.23 (docs/leveldb.md). Compiled inside LevelDB's tree
// (the repo's patch adds this file to the `leveldb` target); talks to the device only through the
// host driver (host/include/lsmc_offload.h: the KB16 IP; host/include/lsmc_table.h: the table engine).
#ifndef LSMC_LEVELDB_HOOK_H_
#define LSMC_LEVELDB_HOOK_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "db/dbformat.h"

namespace leveldb {

class Compaction;
class Env;
class Iterator;
class TableCache;
struct Options;

namespace lsmc {

// What DBImpl lends the hook: its members are private, so the patch passes these closures.
struct OffloadHost {
  std::function<uint64_t()> new_file_number;             // versions_->NewFileNumber() into pending_outputs_
  std::function<void(uint64_t)> release_file_number;     // out of pending_outputs_ again
  std::function<bool()> serve;  // the compaction loop's imm_ flush; returns whether the DB is shutting down
};

// One output table of an offloaded compaction, as DBImpl::CompactionState::Output holds it.
struct OffloadOutput {
  uint64_t number = 0, file_size = 0;
  InternalKey smallest, largest;
};

// Called by DBImpl::DoCompactionWork with the mutex released; `*input` is LevelDB's merging iterator
// over the compaction's inputs.
// - Table engine (LSMC_OFFLOAD=model or rtl): returns true when the engine did the whole compaction: its
//   tables are written and synced under numbers from host.new_file_number and listed in *outputs;
//   LevelDB's loop then has nothing to do and its tail installs them. Returns false (the reason
//   counted and logged) when the compaction falls back to the CPU path; nothing is left behind.
// - KB16 IP (kb16, soc): may replace *input with the stream rebuilt from the device's merge, which the
//   unchanged loop writes; returns false.
// *input may be wrapped (to time the compaction); DoCompactionWork deletes it as before.
bool OffloadCompaction(const void* db, Env* env, const std::string& dbname, const Options& options,
                       const Comparator* user_comparator, TableCache* table_cache, Compaction* c,
                       SequenceNumber smallest_snapshot, const OffloadHost& host, Iterator** input,
                       std::vector<OffloadOutput>* outputs);

// Called by ~DBImpl: appends this DB's counts to LSMC_OFFLOAD_LOG (if set) and forgets them.
void OffloadDbClosed(const void* db);

}  // namespace lsmc
}  // namespace leveldb

#endif  // LSMC_LEVELDB_HOOK_H_
