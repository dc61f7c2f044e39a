// The state of an IcechunkSession: the base snapshot and the staged changes
// (by node path), shared by writer_session.cpp (the Store side) and
// writer_commit.cpp (commit, conflicts, rebase).
#pragma once

#include "icechunk/writer_detail.hpp"
#include "zarr3/key_encoding.hpp"

namespace zarr3::icechunk {

struct IcechunkSession::Impl {
    std::shared_ptr<Store> storage;
    std::string branch;
    std::string base_id;
    std::shared_ptr<Repository> repo;
    std::shared_ptr<const Snapshot> base;
    std::shared_ptr<IcechunkStore> base_store;
    std::recursive_mutex mu;

    // Staged: path -> new zarr.json (nullopt: deleted); ids of nodes created
    // in this session (a base path in new_ids was deleted and re-created).
    std::map<std::string, std::optional<std::string>> meta;
    std::map<std::string, wdetail::Id8> new_ids;
    // path -> chunk coordinates -> new reference (nullopt: erased).
    std::map<std::string, std::map<wdetail::Coords, std::optional<ChunkRef>>> chunks;

    struct View {
        wdetail::Id8 id{};
        bool is_array = false;
        bool from_base = false; // the base node (its chunks show through)
        std::string zarr_json;
        const Node* base = nullptr;
    };
    // The node at `path` ("/" or "/a/b") as the session sees it.
    std::optional<View> view(const std::string& path) const;
    // Every node path the session sees, sorted.
    std::vector<std::string> paths() const;
    // The array and chunk coordinates `key` names; nullopt for other keys.
    struct ChunkKey {
        std::string path;
        wdetail::Coords coords;
        View node;
    };
    std::optional<ChunkKey> chunk_key(const std::string& key) const;
    void load_base(const std::string& id);
    bool has_changes() const { return !meta.empty() || !chunks.empty(); }
};

// "a/b/zarr.json" -> "/a/b"; "zarr.json" -> "/"; nullopt for other keys.
std::optional<std::string> metadata_path(const std::string& key);

} // namespace zarr3::icechunk
