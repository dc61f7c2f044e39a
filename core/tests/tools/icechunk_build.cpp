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
// Edits of an existing repository, as another writer makes them:
//   zarr3_icechunk_build --move REPO FROM TO     a commit on main moving a node
//   zarr3_icechunk_build --delete REPO PATH      a commit on main deleting a node
//   zarr3_icechunk_build --status REPO online|read_only|offline [REASON]
//   zarr3_icechunk_build --disable-flag REPO ID  (3 move_node, 4 create_tag, 5 delete_tag)
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

// The edits of an existing repository (--move, --delete, --status, --disable-flag).
int edit(const std::vector<std::string>& a) {
    auto st = std::make_shared<zarr3::FileStore>(a.at(1), true);
    if (a[0] == "--move" && a.size() == 4) {
        std::cout << icewriter::rearrange(st, "main", a[2], a[3]) << "\n";
    } else if (a[0] == "--delete" && a.size() == 3) {
        std::cout << icewriter::rearrange(st, "main", a[2], "") << "\n";
    } else if (a[0] == "--status" && (a.size() == 3 || a.size() == 4)) {
        const auto v = a[2] == "online"      ? generated::RepoAvailability::Online
                       : a[2] == "read_only" ? generated::RepoAvailability::ReadOnly
                                             : generated::RepoAvailability::Offline;
        icewriter::edit_repo(*st, [&](generated::RepoT& r) {
            r.status->availability = v;
            r.status->limited_availability_reason = a.size() == 4 ? a[3] : "";
        });
    } else if (a[0] == "--disable-flag" && a.size() == 3) {
        icewriter::edit_repo(*st, [&](generated::RepoT& r) {
            r.disabled_feature_flags.push_back(uint16_t(std::stoi(a[2])));
            std::sort(r.disabled_feature_flags.begin(), r.disabled_feature_flags.end());
        });
    } else {
        std::cerr << "zarr3_icechunk_build: bad arguments for " << a[0] << "\n";
        return 2;
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc >= 3 && argv[1][0] == '-') {
        try {
            return edit(std::vector<std::string>(argv + 1, argv + argc));
        } catch (const std::exception& e) {
            std::cerr << "zarr3_icechunk_build: " << e.what() << "\n";
            return 1;
        }
    }
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
