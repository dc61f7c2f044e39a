// Private helpers of the Icechunk writer: ids, sealed files, the repo file
// as an editable object, snapshots, manifests and transaction logs.
#pragma once

#include "icechunk/icechunk_detail.hpp"
#include "zarr3/icechunk_write.hpp"

#include <manifest_generated.h>
#include <repo_generated.h>
#include <snapshot_generated.h>
#include <transaction_log_generated.h>

namespace zarr3::icechunk::wdetail {

using Id12 = std::array<uint8_t, 12>;
using Id8 = std::array<uint8_t, 8>;
using Coords = std::vector<uint64_t>;

Id12 random_id12();
Id8 random_id8();
Id12 id12_of(const std::string& text, const std::string& where);
uint64_t now_us();
// Test hook (ZARR3_TEST_KILL_AT, compact.hpp).
void kill_point(const char* step);

// Header + zstd-compressed flatbuffer.
Bytes seal(FileType type, const flatbuffers::FlatBufferBuilder& b);

// The repo file as an editable object; Error naming the file when bad.
std::unique_ptr<generated::RepoT> load_repo(const Bytes& file, const std::string& where);
Bytes pack_repo(const generated::RepoT& repo);
// Index of snapshot `id` in repo.snapshots, or -1.
int64_t snapshot_index(const generated::RepoT& repo, const std::string& id);
// The snapshot a branch points at; nullopt when there is no such branch.
std::optional<std::string> branch_tip(const generated::RepoT& repo, const std::string& name);
// Adds snapshot info `info` (id sorted), whose parent is `parent` (empty:
// none), keeping every ref and parent offset pointing at the same snapshots.
void add_snapshot(generated::RepoT& repo, std::unique_ptr<generated::SnapshotInfoT> info,
                  const std::string& parent);
// Sets (or adds, name sorted) ref `name` in `refs` to snapshot `id`.
void set_ref(generated::RepoT& repo, std::vector<std::unique_ptr<generated::RefT>>& refs,
             const std::string& name, const std::string& id);
// Records an update at the head of the ops log.
void push_update(generated::RepoT& repo, generated::UpdateTypeUnion u);

// Feature flag ids of spec 2's repo file, numbered as the real Icechunk
// numbers them (each enabled unless listed in disabled_feature_flags).
constexpr uint16_t kFlagMoveNode = 3, kFlagCreateTag = 4, kFlagDeleteTag = 5;
// The repository's write policy: Error naming `where`, the status (and its
// reason) when the repository is not Online (ReadOnly, Offline): `what`
// ("commit", "tag creation" ...) is refused.
void require_online(const generated::RepoT& repo, const std::string& where,
                    const std::string& what);
// Error naming the flag when feature flag `id` is disabled.
void require_flag(const generated::RepoT& repo, uint16_t id, const std::string& where,
                  const std::string& what);

// Replaces `repo` holding `old_bytes` by `next`: copies the old file to
// overwritten/ first (recorded as the backup of the previous update), then
// compare-and-swap. False when another writer changed `repo` meanwhile.
bool replace_repo(Store& storage, const Bytes& old_bytes, generated::RepoT& next);
// Reads `repo`, applies `edit` and replaces it, retrying while other
// writers change it. `edit` throws to give up.
void update_repo(Store& storage, const std::function<void(generated::RepoT&)>& edit);

// One node of a snapshot being written.
struct NodeOut {
    std::string path;
    Id8 id{};
    bool is_array = false;
    std::string zarr_json;
    std::vector<ManifestExtent> manifests;
};
struct ManifestInfo {
    std::string id;
    uint64_t size_bytes = 0;
    uint32_t refs = 0;
};
Bytes snapshot_file(const Id12& id, const std::vector<NodeOut>& nodes, uint64_t flushed_at,
                    const std::string& message, const std::vector<ManifestInfo>& manifests,
                    bool initial);
// manifest_files_v2 of a stored snapshot.
std::vector<ManifestInfo> manifest_infos(Store& storage, const std::string& snapshot_id);

// A manifest of one array's references (sorted by coordinates).
Bytes manifest_file(const Id12& id, const Id8& node,
                    const std::vector<std::pair<Coords, ChunkRef>>& refs);

// What one commit changed (a transaction log): every change kind spec 2
// records (new, deleted and updated nodes, chunk references, moves).
struct Changes {
    std::set<Id8> new_groups, new_arrays, deleted_groups, deleted_arrays, updated_groups,
        updated_arrays;
    std::map<Id8, std::set<Coords>> chunks;
    // node id -> (path before, path after) of each moved node.
    std::map<Id8, std::pair<std::string, std::string>> moved;
};
Bytes txlog_file(const Id12& id, const Changes& c);
Changes parse_txlog(const Bytes& file, const std::string& where);

} // namespace zarr3::icechunk::wdetail
