#include "error.h"

namespace table_engine {

const char* ErrorName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kBadMagic: return "BAD_MAGIC";
    case ErrorCode::kBadCrc: return "BAD_CRC";
    case ErrorCode::kTruncated: return "TRUNCATED";
    case ErrorCode::kBadBlock: return "BAD_BLOCK";
    case ErrorCode::kBadVarint: return "BAD_VARINT";
    case ErrorCode::kBadSnappy: return "BAD_SNAPPY";
    case ErrorCode::kKeyOrder: return "KEY_ORDER";
    case ErrorCode::kKeyTooLong: return "KEY_TOO_LONG";
    case ErrorCode::kOutputFull: return "OUTPUT_FULL";
    case ErrorCode::kBadJob: return "BAD_JOB";
  }
  return "BAD_JOB";
}

std::string EngineError::Line() const {
  return std::string("error=") + ErrorName(code) + " table=" + table + " offset=" + std::to_string(offset) +
         " " + what();
}

}  // namespace table_engine
