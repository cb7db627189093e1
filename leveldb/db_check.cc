// Drop-in check of the offloaded libleveldb: one program, linked against libleveldb.so.1d, run once with
// the offloaded library (LD_LIBRARY_PATH=build/leveldb/lib) to write a database and once with Debian's
// stock library to read it back.
//
//   lsmc_db_check write DIR SEED OPS [snappy|none]
//                                      random puts, overwrites and deletes (small write buffer and
//                                      files, so compactions run), a snapshot held for part of the run;
//                                      checks the DB against an in-memory map, then writes DIR.expect;
//                                      tables Snappy-compressed (LevelDB's default) or not
//   lsmc_db_check read DIR             opens DIR (paranoid checks) and compares a full scan and point
//                                      reads with DIR.expect
// Each run first prints "lib PATH" (the libleveldb it loaded). Exit 0 ok, 1 mismatch, 2 usage/IO error.
#include <dlfcn.h>
#include <leveldb/c.h>
#include <leveldb/db.h>
#include <leveldb/write_batch.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>

namespace {

uint64_t rng_state;
uint32_t rnd() {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)rng_state;
}

std::string make_key(uint32_t i, bool long_ok) {
    char b[32];
    // mostly 16-byte keys like db_bench, some shorter; longer ones (not KB16) only in the last 2 % of
    // the run (a table holding one falls back to the CPU path, so earlier compactions stay offloadable)
    if (long_ok && i % 7 == 0) snprintf(b, sizeof b, "~long-key-%012u", i);  // 22 bytes, not KB16: all sort last
    else if (i % 13 == 0) snprintf(b, sizeof b, "k%u", i);
    else snprintf(b, sizeof b, "%016u", i);
    return b;
}

int fail(const char* what, const std::string& detail) {
    fprintf(stderr, "lsmc_db_check: %s: %s\n", what, detail.c_str());
    return 1;
}

std::map<std::string, std::string> scan(leveldb::DB* db, leveldb::Status* st) {
    std::map<std::string, std::string> m;
    leveldb::ReadOptions ro;
    ro.verify_checksums = true;
    leveldb::Iterator* it = db->NewIterator(ro);
    for (it->SeekToFirst(); it->Valid(); it->Next()) m[it->key().ToString()] = it->value().ToString();
    *st = it->status();
    delete it;
    return m;
}

}  // namespace

int main(int argc, char** argv) {
    Dl_info info;
    if (dladdr((void*)&leveldb_open, &info) && info.dli_fname) printf("lib %s\n", info.dli_fname);
    if (argc < 3) {
        fprintf(stderr, "usage: %s write DIR SEED OPS | read DIR\n", argv[0]);
        return 2;
    }
    std::string mode = argv[1], dir = argv[2];
    leveldb::Options opt;
    opt.paranoid_checks = true;
    leveldb::DB* db = nullptr;
    if (mode == "write") {
        if (argc < 5 || argc > 6 || (argc == 6 && strcmp(argv[5], "snappy") != 0 && strcmp(argv[5], "none") != 0))
            return fprintf(stderr, "usage: %s write DIR SEED OPS [snappy|none]\n", argv[0]), 2;
        if (argc == 6 && strcmp(argv[5], "none") == 0) opt.compression = leveldb::kNoCompression;
        rng_state = strtoull(argv[3], nullptr, 10) * 0x9E3779B97F4A7C15ull | 1;
        long ops = atol(argv[4]);
        leveldb::DestroyDB(dir, opt);
        opt.create_if_missing = true;
        opt.error_if_exists = true;
        opt.write_buffer_size = 64 * 1024;
        opt.max_file_size = 128 * 1024;
        leveldb::Status s = leveldb::DB::Open(opt, dir, &db);
        if (!s.ok()) return fail("open", s.ToString()), 2;
        std::map<std::string, std::string> model;
        const leveldb::Snapshot* snap = nullptr;
        std::map<std::string, std::string> at_snap;
        uint32_t space = (uint32_t)(ops / 3 + 10);
        for (long i = 0; i < ops; i++) {
            std::string k = make_key(rnd() % space, i >= ops - ops / 50);
            if (rnd() % 8 == 0) {
                db->Delete(leveldb::WriteOptions(), k);
                model.erase(k);
            } else {
                std::string v = "v" + std::to_string(i) + std::string(rnd() % 120, 'a' + (char)(i % 26));
                db->Put(leveldb::WriteOptions(), k, v);
                model[k] = v;
            }
            if (i == ops / 3) snap = db->GetSnapshot(), at_snap = model;
            if (i == 2 * ops / 3 && snap) {
                leveldb::ReadOptions ro;
                ro.snapshot = snap;
                leveldb::Iterator* it = db->NewIterator(ro);
                std::map<std::string, std::string> got;
                for (it->SeekToFirst(); it->Valid(); it->Next()) got[it->key().ToString()] = it->value().ToString();
                delete it;
                if (got != at_snap) return fail("snapshot read", "differs from the model");
                db->ReleaseSnapshot(snap);
                snap = nullptr;
            }
        }
        db->CompactRange(nullptr, nullptr);
        leveldb::Status ss;
        if (scan(db, &ss) != model || !ss.ok()) return fail("scan after writes", "differs from the model " + ss.ToString());
        delete db;
        std::ofstream f(dir + ".expect", std::ios::binary);
        for (auto& kv : model) f << kv.first.size() << ' ' << kv.first << ' ' << kv.second.size() << ' ' << kv.second << '\n';
        if (!f) return fail("write", dir + ".expect"), 2;
        printf("wrote %zu keys\n", model.size());
        return 0;
    }
    if (mode == "read") {
        std::map<std::string, std::string> want;
        std::ifstream f(dir + ".expect", std::ios::binary);
        if (!f) return fail("read", "cannot open " + dir + ".expect"), 2;
        size_t kl, vl;
        while (f >> kl) {
            std::string k(kl, '\0'), v;
            f.get();
            f.read(&k[0], kl);
            f >> vl;
            f.get();
            v.resize(vl);
            f.read(&v[0], vl);
            want[k] = v;
        }
        leveldb::Status s = leveldb::DB::Open(opt, dir, &db);
        if (!s.ok()) return fail("open", s.ToString()), 2;
        leveldb::Status ss;
        std::map<std::string, std::string> got = scan(db, &ss);
        if (!ss.ok()) return fail("scan", ss.ToString());
        if (got != want) return fail("scan", "differs from the writer's model (" + std::to_string(got.size()) + " vs " + std::to_string(want.size()) + " keys)");
        for (auto& kv : want) {
            std::string v;
            leveldb::Status g = db->Get(leveldb::ReadOptions(), kv.first, &v);
            if (!g.ok() || v != kv.second) return fail("get", kv.first);
        }
        delete db;
        printf("read %zu keys: identical\n", got.size());
        return 0;
    }
    fprintf(stderr, "usage: %s write DIR SEED OPS | read DIR\n", argv[0]);
    return 2;
}
