// The table engine's fixed sizes: buffers the RTL has and the model enforces, so a job the model
// accepts is one the hardware can run. lsmc.build.table_model reads these lines (one fact, one place).
#ifndef TABLE_ENGINE_LIMITS_H
#define TABLE_ENGINE_LIMITS_H

#include <cstddef>
#include <cstdint>

namespace table_engine {

// Longest user key an entry may carry: the merge ways' key registers and the block builder's
// last-key buffer hold this many bytes plus the 8-byte tag.
constexpr size_t kMaxUserKeyBytes = 1024;
constexpr size_t kMaxInternalKeyBytes = kMaxUserKeyBytes + 8;

// Largest block (on disk or decompressed) the block buffer in DDR takes: a LevelDB block is about
// block_size plus one entry, so this bounds the value length too.
constexpr size_t kMaxBlockBytes = 4u << 20;

// The table writer's block buffer of a compressor lane (Snappy jobs): a block whose contents and trailer pass
// it streams out raw while the lane counts its Snappy form, so it may be no more than kMaxBlockBytes and
// LevelDB must keep it raw (its Snappy form saves less than 1/8); else OUTPUT_FULL.
constexpr size_t kZipBlockBytes = 1u << 16;

// Default capacity of one output table's buffer in DDR (the host may give another per job).
constexpr uint64_t kDefaultOutputBufferBytes = 64ull << 20;

// Snappy compressor: one hash table of 16-bit positions, reset per fragment of kSnappyFragmentBytes
// and sized to the fragment (next power of two) between 2^kSnappyMinHashBits and 2^kSnappyMaxHashBits
// entries (LevelDB's ~4 KiB blocks: one fragment, 4096 entries).
constexpr int kSnappyMinHashBits = 8;
constexpr int kSnappyMaxHashBits = 14;
constexpr size_t kSnappyFragmentBytes = 1u << 16;

// Compressor lanes of the table writer (rtl/TableWriter.scala's ZipLanes, the simulation builds' --zip-lanes):
// block buffers with their own Snappy compressor taking consecutive blocks, so the writer goes on building
// while earlier blocks compress (the cycle estimate's compress stage divides by them).
constexpr int kZipLanes = 5;

// Merge ways of one unit (runs beyond them cascade through temporary tables in DDR).
constexpr int kDefaultWays = 8;

}  // namespace table_engine

#endif
