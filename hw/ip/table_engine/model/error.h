// Errors the engine reports: a code, the table (input path or output file) and a byte offset, as the
// RTL's error registers hold them; the job stops at the first one.
#ifndef TABLE_ENGINE_ERROR_H
#define TABLE_ENGINE_ERROR_H

#include <cstdint>
#include <stdexcept>
#include <string>

namespace table_engine {

enum class ErrorCode {
  kBadMagic, kBadCrc, kTruncated, kBadBlock, kBadVarint, kBadSnappy,
  kKeyOrder, kKeyTooLong, kOutputFull, kBadJob,
};

const char* ErrorName(ErrorCode code);

class EngineError : public std::runtime_error {
 public:
  EngineError(ErrorCode code, std::string table, uint64_t offset, const std::string& message)
      : std::runtime_error(message), code(code), table(std::move(table)), offset(offset) {}
  ErrorCode code;
  std::string table;
  uint64_t offset;
  // "error=CODE table=PATH offset=N message"
  std::string Line() const;
};

}  // namespace table_engine

#endif
