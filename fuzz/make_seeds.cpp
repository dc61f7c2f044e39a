// Writes the seed corpora under <corpus>/<target>/ from the conformance
// stores and from values the library encodes itself. Run once; the output is
// committed (small: each seed < 64 KiB).
//   fuzz_make_seeds <conformance dir> <corpus dir>
#include "shard_setup.hpp"
#include "store_container.hpp"

#include "zarr3/array.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace zarr3;
using nlohmann::json;

namespace {

fs::path g_out;

void write_seed(const std::string& target, const std::string& name, const std::string& bytes) {
    fs::create_directories(g_out / target);
    std::ofstream(g_out / target / name, std::ios::binary) << bytes;
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

std::string str(const Bytes& b) {
    return std::string(b.begin(), b.end());
}

std::string safe_name(std::string s) {
    for (char& c : s)
        if (c == '/') c = '_';
    return s;
}

void conformance_seeds(const fs::path& conf) {
    for (const auto& e : fs::recursive_directory_iterator(conf)) {
        if (e.path().filename() != "zarr.json") continue;
        const std::string text = slurp(e.path());
        const std::string name = safe_name(fs::relative(e.path().parent_path(), conf).string());
        write_seed("fuzz_metadata", name, text);
        const json j = json::parse(text);
        if (j.value("node_type", "") != "array") continue;
        write_seed("fuzz_rectilinear", name, std::string("\0\0\0", 3) + j["chunk_grid"].dump());
        // The array with its chunks, keys relative to the array.
        std::map<std::string, std::string> kv;
        size_t total = 0;
        for (const auto& c : fs::recursive_directory_iterator(e.path().parent_path())) {
            if (!c.is_regular_file()) continue;
            const std::string key = fs::relative(c.path(), e.path().parent_path()).string();
            if (key.find("/zarr.json") != std::string::npos) continue; // child nodes
            kv[key] = slurp(c.path());
            total += kv[key].size();
        }
        if (total <= 64 * 1024) write_seed("fuzz_array", name, fuzzstore::pack(kv));
    }
}

void shard_seeds() {
    for (int v : {0, 1, 2, 3, 4, 5, 6, 7, 0x21, 0x24}) {
        const uint8_t variant = uint8_t(v | 8);
        for (int sparse = 0; sparse < 2; ++sparse) {
            auto store = std::make_shared<MemoryStore>();
            auto arr = Array::create(store, "",
                                     parse_array_metadata(fuzzshard::metadata(variant), "seed"));
            const Shape shape = arr->metadata().shape;
            std::vector<uint16_t> vals(shape[0] * shape[1]);
            for (size_t i = 0; i < vals.size(); ++i)
                vals[i] = uint16_t(sparse && (i / 16) % 8 < 4 ? 7 : i * 3 + 1);
            arr->write(Selection::all(shape), vals.data());
            arr->flush();
            const auto shard = store->get("c/0/0");
            if (!shard) continue;
            write_seed("fuzz_shard", "v" + std::to_string(v) + (sparse ? "_sparse" : ""),
                       std::string{char(variant), char(sparse)} + str(*shard));
        }
    }
}

std::string header(uint8_t codec, uint8_t param, uint16_t size) {
    return std::string{char(codec), char(param), char(size & 0xff), char(size >> 8)};
}

void codec_seeds() {
    Bytes sample(300);
    for (size_t i = 0; i < sample.size(); ++i)
        sample[i] = uint8_t((i * 7) % 23 + (i / 50));
    const std::string where = "seed";
    const std::pair<const char*, json> b2b[] = {
        {"gzip", {{"level", 1}}},
        {"zstd", {{"level", 1}, {"checksum", false}}},
        {"blosc", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 1}}},
        {"crc32c", nullptr}};
    for (uint8_t k = 0; k < 4; ++k) {
        const Bytes enc = make_bytes_to_bytes(b2b[k].first, b2b[k].second, where)->encode(sample);
        write_seed("fuzz_codecs", std::string(b2b[k].first) + "_expected",
                   header(k, 1, uint16_t(sample.size())) + str(enc));
        write_seed("fuzz_codecs", std::string(b2b[k].first) + "_unknown",
                   header(k, 0, uint16_t(sample.size())) + str(enc));
    }
    // bytes: uint16 big endian (param bit0 = big, type index 2), shape [150, 1]
    write_seed("fuzz_codecs", "bytes_u16_be", header(4, 1 | (2 << 1), 150) + str(sample));
    write_seed("fuzz_codecs", "bytes_f64_le", header(4, 5 << 1, 37) + str(sample).substr(0, 296));
    // transpose: rank 3 (param % 4 == 2), a non-trivial permutation
    write_seed("fuzz_codecs", "transpose_3d", header(5, 2 | (3 << 2), 0x1234) + str(sample));
    write_seed("fuzz_codecs", "transpose_F", header(5, 0xc1, 0x2345) + str(sample));
    // vlen-utf8: three strings (one empty, one not ASCII)
    const std::string vlen("\x03\0\0\0\x01\0\0\0x\0\0\0\0\x04\0\0\0\xce\xb6\xce\xb6", 21);
    write_seed("fuzz_codecs", "vlen_utf8", header(6, 0, 3) + vlen);
}

void rectilinear_seeds() {
    const char* grids[] = {
        R"([[[10,5],[5,2]],[[15,2]]])",
        R"([[1,2,3,[4,1000]],7,[100]])",
        R"({"name":"rectangular","configuration":{"chunk_shape":[[3,4,5],6]}})",
        R"({"name":"regular","configuration":{"chunk_shape":[3,4]}})",
        R"([[[1,18446744073709551615]]])",
        R"([[[4294967296,4294967296]],[1]])",
    };
    int n = 0;
    for (const char* g : grids)
        write_seed("fuzz_rectilinear", "grid" + std::to_string(n++), std::string("\0\3\0", 3) + g);
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s <conformance dir> <corpus dir>\n", argv[0]);
        return 2;
    }
    g_out = argv[2];
    conformance_seeds(argv[1]);
    shard_seeds();
    codec_seeds();
    rectilinear_seeds();
    return 0;
}
