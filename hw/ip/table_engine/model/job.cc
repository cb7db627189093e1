#include "job.h"

#include <json-c/json.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "error.h"
#include "internal_key.h"

namespace table_engine {
namespace {

struct JsonFree {
  void operator()(json_object* o) const { json_object_put(o); }
};

class JobParser {
 public:
  explicit JobParser(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void Bad(const std::string& msg, uint64_t offset = 0) const {
    throw EngineError(ErrorCode::kBadJob, path_, offset, msg);
  }

  json_object* Field(json_object* obj, const char* name, const std::string& where, bool required) const {
    json_object* v = nullptr;
    if (!json_object_object_get_ex(obj, name, &v) || v == nullptr) {
      if (required) Bad(where + ": missing \"" + name + "\"");
      return nullptr;
    }
    return v;
  }

  void OnlyKeys(json_object* obj, const std::set<std::string>& keys, const std::string& where) const {
    json_object_object_foreach(obj, k, v) {
      (void)v;
      if (!keys.count(k)) Bad(where + ": unknown key \"" + k + "\"");
    }
  }

  json_object* Object(json_object* v, const std::string& where) const {
    if (!json_object_is_type(v, json_type_object)) Bad(where + " is not an object");
    return v;
  }

  json_object* Array(json_object* v, const std::string& where) const {
    if (!json_object_is_type(v, json_type_array)) Bad(where + " is not an array");
    return v;
  }

  uint64_t Uint(json_object* v, const std::string& where, uint64_t lo, uint64_t hi) const {
    if (!json_object_is_type(v, json_type_int)) Bad(where + " is not an integer");
    // json-c keeps integers as int64 or uint64; a negative one reads as 0 through get_uint64.
    if (json_object_get_int64(v) < 0) Bad(where + " is negative");
    errno = 0;
    uint64_t x = json_object_get_uint64(v);
    if (errno != 0 || x < lo || x > hi)
      Bad(where + " = " + json_object_to_json_string(v) + " is outside [" + std::to_string(lo) + ", " +
          std::to_string(hi) + "]");
    return x;
  }

  std::string HexBytes(json_object* v, const std::string& where) const {
    if (!json_object_is_type(v, json_type_string)) Bad(where + " is not a hex string");
    std::string_view s(json_object_get_string(v), size_t(json_object_get_string_len(v)));
    if (s.size() % 2) Bad(where + " has an odd number of hex digits");
    std::string out;
    for (size_t i = 0; i < s.size(); i += 2) {
      int hi = Nibble(s[i]), lo = Nibble(s[i + 1]);
      if (hi < 0 || lo < 0) Bad(where + " holds a character that is not a hex digit");
      out.push_back(char(hi << 4 | lo));
    }
    return out;
  }

  static int Nibble(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  std::string path_;
};

std::string Dir(const std::string& path) {
  size_t s = path.rfind('/');
  return s == std::string::npos ? std::string(".") : path.substr(0, s == 0 ? 1 : s);
}

}  // namespace

LoadedJob LoadJob(const std::string& job_path, uint64_t output_buffer_bytes) {
  JobParser P(job_path);
  std::ifstream f(job_path, std::ios::binary);
  if (!f) P.Bad(std::string("cannot read the job: ") + std::strerror(errno));
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();

  std::unique_ptr<json_tokener, void (*)(json_tokener*)> tok(json_tokener_new(), json_tokener_free);
  std::unique_ptr<json_object, JsonFree> root(json_tokener_parse_ex(tok.get(), text.data(), int(text.size())));
  if (json_tokener_get_error(tok.get()) != json_tokener_success || root == nullptr)
    P.Bad(std::string("not JSON: ") + json_tokener_error_desc(json_tokener_get_error(tok.get())),
          json_tokener_get_parse_end(tok.get()));
  if (json_tokener_get_parse_end(tok.get()) < text.size() &&
      text.find_first_not_of(" \t\r\n", json_tokener_get_parse_end(tok.get())) != std::string::npos)
    P.Bad("text after the JSON object", json_tokener_get_parse_end(tok.get()));
  json_object* j = P.Object(root.get(), "the job");
  P.OnlyKeys(j, {"format", "runs", "options", "smallest_snapshot", "grandparents", "deeper_levels",
                 "first_file_number"}, "the job");

  json_object* fmt = P.Field(j, "format", "the job", true);
  if (!json_object_is_type(fmt, json_type_string) || std::string(json_object_get_string(fmt)) != "lsmc-table-job/1")
    P.Bad("format is not \"lsmc-table-job/1\"");

  LoadedJob job;
  CompactionSpec& s = job.spec;

  json_object* opt = P.Object(P.Field(j, "options", "the job", true), "options");
  P.OnlyKeys(opt, {"block_size", "block_restart_interval", "compression", "bloom_bits_per_key", "max_file_size",
                   "verify_checksums"}, "options");
  // Absent options take LevelDB's defaults (include/leveldb/options.h).
  if (json_object* v = P.Field(opt, "block_size", "options", false))
    s.writer.block_size = P.Uint(v, "options.block_size", 1, uint64_t(1) << 30);
  if (json_object* v = P.Field(opt, "block_restart_interval", "options", false))
    s.writer.restart_interval = int(P.Uint(v, "options.block_restart_interval", 1, 1u << 20));
  s.writer.snappy = true;
  if (json_object* v = P.Field(opt, "compression", "options", false)) {
    std::string c = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
    if (c != "none" && c != "snappy") P.Bad("options.compression is neither \"none\" nor \"snappy\"");
    s.writer.snappy = c == "snappy";
  }
  if (json_object* v = P.Field(opt, "bloom_bits_per_key", "options", false))
    s.writer.bloom_bits_per_key = int(P.Uint(v, "options.bloom_bits_per_key", 0, 1000));
  if (json_object* v = P.Field(opt, "max_file_size", "options", false))
    s.max_file_size = P.Uint(v, "options.max_file_size", 1, uint64_t(1) << 40);
  if (json_object* v = P.Field(opt, "verify_checksums", "options", false)) {
    if (!json_object_is_type(v, json_type_boolean)) P.Bad("options.verify_checksums is not true or false");
    s.verify_checksums = json_object_get_boolean(v);
  }
  s.writer.buffer_bytes = output_buffer_bytes;

  s.smallest_snapshot = P.Uint(P.Field(j, "smallest_snapshot", "the job", true), "smallest_snapshot", 0, kMaxSequence);
  s.first_file_number = P.Uint(P.Field(j, "first_file_number", "the job", true), "first_file_number", 0,
                               uint64_t(1) << 62);

  if (json_object* gp = P.Field(j, "grandparents", "the job", false)) {
    P.Array(gp, "grandparents");
    for (size_t i = 0; i < json_object_array_length(gp); i++) {
      std::string w = "grandparents[" + std::to_string(i) + "]";
      json_object* g = P.Object(json_object_array_get_idx(gp, i), w);
      P.OnlyKeys(g, {"largest", "size"}, w);
      Grandparent x;
      x.largest = P.HexBytes(P.Field(g, "largest", w, true), w + ".largest");
      if (x.largest.size() < 8) P.Bad(w + ".largest is shorter than an internal key's 8-byte tag");
      x.size = P.Uint(P.Field(g, "size", w, true), w + ".size", 0, uint64_t(1) << 48);
      if (!s.grandparents.empty() && CompareInternal(s.grandparents.back().largest, x.largest) > 0)
        P.Bad(w + ".largest is smaller than the previous grandparent's");
      s.grandparents.push_back(std::move(x));
    }
  }
  if (json_object* dl = P.Field(j, "deeper_levels", "the job", false)) {
    P.Array(dl, "deeper_levels");
    for (size_t l = 0; l < json_object_array_length(dl); l++) {
      std::string wl = "deeper_levels[" + std::to_string(l) + "]";
      json_object* files = P.Array(json_object_array_get_idx(dl, l), wl);
      std::vector<KeyRange> level;
      for (size_t i = 0; i < json_object_array_length(files); i++) {
        std::string w = wl + "[" + std::to_string(i) + "]";
        json_object* r = P.Object(json_object_array_get_idx(files, i), w);
        P.OnlyKeys(r, {"smallest", "largest"}, w);
        KeyRange k{P.HexBytes(P.Field(r, "smallest", w, true), w + ".smallest"),
                   P.HexBytes(P.Field(r, "largest", w, true), w + ".largest")};
        if (CompareBytes(k.smallest, k.largest) > 0) P.Bad(w + ": smallest is above largest");
        if (!level.empty() && CompareBytes(level.back().largest, k.smallest) > 0)
          P.Bad(w + " starts below the end of the level's previous file");
        level.push_back(std::move(k));
      }
      s.deeper_levels.push_back(std::move(level));
    }
  }

  json_object* runs = P.Array(P.Field(j, "runs", "the job", true), "runs");
  if (json_object_array_length(runs) == 0) P.Bad("runs is empty");
  const std::string dir = Dir(job_path);
  for (size_t r = 0; r < json_object_array_length(runs); r++) {
    std::string wr = "runs[" + std::to_string(r) + "]";
    json_object* run = P.Array(json_object_array_get_idx(runs, r), wr);
    if (json_object_array_length(run) == 0) P.Bad(wr + " holds no table");
    std::vector<TableImage> tables;
    for (size_t i = 0; i < json_object_array_length(run); i++) {
      json_object* p = json_object_array_get_idx(run, i);
      if (!json_object_is_type(p, json_type_string)) P.Bad(wr + "[" + std::to_string(i) + "] is not a path");
      std::string rel = json_object_get_string(p);
      std::string full = !rel.empty() && rel[0] == '/' ? rel : dir + "/" + rel;
      std::ifstream tf(full, std::ios::binary);
      if (!tf) throw EngineError(ErrorCode::kBadJob, full, 0, std::string("cannot read the table: ") + std::strerror(errno));
      std::stringstream ts;
      ts << tf.rdbuf();
      job.images.push_back(ts.str());
      tables.push_back(TableImage{full, job.images.back()});
      job.tables_in++;
    }
    s.runs.push_back(std::move(tables));
  }
  return job;
}

std::string ResultJson(const CompactionResult& r) {
  std::string o = "{\n  \"tables\": [";
  for (size_t i = 0; i < r.tables.size(); i++) {
    const OutputTable& t = r.tables[i];
    o += i ? ",\n    " : "\n    ";
    o += "{\"file\": \"" + t.file + "\", \"number\": " + std::to_string(t.number) + ", \"size\": " +
         std::to_string(t.bytes.size()) + ", \"entries\": " + std::to_string(t.entries) + ", \"smallest\": \"" +
         Hex(t.smallest) + "\", \"largest\": \"" + Hex(t.largest) + "\"}";
  }
  o += r.tables.empty() ? "],\n" : "\n  ],\n";
  o += "  \"entries_in\": " + std::to_string(r.entries_in) + ", \"entries_out\": " + std::to_string(r.entries_out) +
       ", \"dropped\": " + std::to_string(r.dropped) + ", \"bytes_in\": " + std::to_string(r.bytes_in) +
       ", \"bytes_out\": " + std::to_string(r.bytes_out) + "\n}\n";
  return o;
}

}  // namespace table_engine
