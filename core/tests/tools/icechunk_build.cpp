// zarr3_icechunk_build OUT_DIR SPEC.json: writes the Icechunk repository
// SPEC.json describes into the folder OUT_DIR (created), for the pytest
// suites (icechunk_writer.hpp). SPEC.json:
//   {"containers": ["file:///data/"], "groups": ["/g"],
//    "arrays": [{"path": "/g/a", "zarr_json": {...},
//                "refs": [{"index": [0], "inline": [1, 2]},
//                         {"index": [1], "native": [3, 4]},
//                         {"index": [2], "location": "file:///data/x.bin",
//                          "offset": 0, "length": 2, "etag": "\"e\"",
//                          "last_modified": 1700000000}]}]}
//   optional "manifest_padding": N (zero bytes after each manifest, zstd-compressed)
#include "icechunk/icechunk_writer.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

namespace {

icewriter::Ref ref_of(const nlohmann::json& j) {
    icewriter::Ref r;
    r.index = j.at("index").get<std::vector<uint32_t>>();
    r.inline_data = j.value("inline", zarr3::Bytes{});
    r.native = j.value("native", zarr3::Bytes{});
    r.location = j.value("location", std::string());
    r.offset = j.value("offset", uint64_t(0));
    r.length = j.value("length", uint64_t(0));
    r.etag = j.value("etag", std::string());
    r.last_modified = j.value("last_modified", uint32_t(0));
    return r;
}

icewriter::RepoSpec spec_of(const nlohmann::json& j) {
    icewriter::RepoSpec s;
    s.containers = j.value("containers", std::vector<std::string>{});
    s.groups = j.value("groups", std::vector<std::string>{});
    s.manifest_padding = j.value("manifest_padding", size_t(0));
    for (const auto& a : j.value("arrays", nlohmann::json::array())) {
        icewriter::ArraySpec as;
        as.path = a.at("path").get<std::string>();
        as.zarr_json = a.at("zarr_json").dump();
        for (const auto& r : a.value("refs", nlohmann::json::array()))
            as.refs.push_back(ref_of(r));
        s.arrays.push_back(std::move(as));
    }
    return s;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: zarr3_icechunk_build OUT_DIR SPEC.json\n";
        return 2;
    }
    try {
        std::ifstream in(argv[2]);
        const auto files = icewriter::build(spec_of(nlohmann::json::parse(in)));
        for (const auto& [key, bytes] : files) {
            const auto path = std::filesystem::path(argv[1]) / key;
            std::filesystem::create_directories(path.parent_path());
            std::ofstream out(path, std::ios::binary);
            out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
            if (!out) throw std::runtime_error("cannot write " + path.string());
        }
    } catch (const std::exception& e) {
        std::cerr << "zarr3_icechunk_build: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
