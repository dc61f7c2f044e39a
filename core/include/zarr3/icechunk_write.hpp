// Writing Icechunk repositories (on-disk format spec version 2): creating
// one, and transactions on a branch. A session is a writable Zarr store over
// the branch tip: puts and erases of "zarr.json" / "<path>/zarr.json" change
// nodes, puts of chunk keys write new chunk objects `chunks/<id>` at once,
// erases of chunk keys remove references; reads see the staged state over the
// base snapshot. commit() writes manifests (only for arrays whose chunks
// changed), a snapshot, a transaction log, then replaces the `repo` file with
// Store::compare_and_swap (after copying it to `overwritten/`). No object but
// `repo` is ever overwritten, so readers of older snapshots are undisturbed.
#pragma once

#include "zarr3/icechunk.hpp"

#include <set>

namespace zarr3::icechunk {

// Name written in the header of every file this library writes.
constexpr const char* kImplementationName = "gdal-zarr3";
// Chunk indexes along axis 0 per manifest of an array: a commit writes a
// manifest for each such run of indexes holding a changed chunk and keeps
// the others (Icechunk's manifest splitting; an append rewrites the last
// one). The environment's ZARR3_ICECHUNK_SPLIT_CHUNKS overrides it.
constexpr uint64_t kManifestSplitChunks = 1000;
// The well-known id of a repository's first snapshot.
constexpr const char* kInitialSnapshotId = "1CECHNKREP0F1RSTCMT0";

// Creates an empty repository (spec 2) in `storage`: the initial snapshot
// "Repository initialized" (no nodes, as Icechunk writes it), its
// transaction log, and the `repo` file with branch main, written with
// compare_and_swap from absent. Error when `storage` already holds a `repo`
// file, or cannot compare-and-swap.
std::shared_ptr<Repository> create_repository(std::shared_ptr<Store> storage);

// Adds tag `name` (or branch `name`) pointing at snapshot `snapshot_id` with
// a conditional update of `repo`. Error when the name exists (for tags: or
// existed: Icechunk never reuses a deleted tag's name), is not a valid
// name, or the snapshot is unknown.
void create_tag(Store& storage, const std::string& name, const std::string& snapshot_id);
void create_branch(Store& storage, const std::string& name, const std::string& snapshot_id);

// Declares virtual chunk container `url_prefix` in the repository's
// configuration (replacing one with the same prefix), as Icechunk writes it:
// a file:// prefix with a local_file_system store of its path, s3:// and
// http(s):// ones with no store settings (others refused). Recorded as a
// ConfigChangedUpdate.
void declare_virtual_container(Store& storage, const std::string& url_prefix);
// The url_prefix of every container the repository declares.
std::vector<std::string> declared_virtual_containers(Store& storage);

// Moves branch `name` to snapshot `snapshot_id` (any snapshot of the
// repository, as Icechunk's reset_branch), with a conditional update of
// `repo` recording a BranchResetUpdate; the later snapshots stay readable by
// id. With `expected_tip` (non-empty), CommitConflict unless the branch
// still points there (a commit made since is never dropped silently).
// Error for a ReadOnly/Offline repository, an unknown branch or snapshot.
// Returns the branch's previous tip.
std::string reset_branch(Store& storage, const std::string& name, const std::string& snapshot_id,
                         const std::string& expected_tip = "");

// A commit could not be made because another writer changed the same
// things; the message names them. The branch holds the other commit.
class CommitConflict : public Error {
  public:
    using Error::Error;
};

class IcechunkSession : public Store {
  public:
    // A transaction on `branch` of the spec-2 repository in `storage`.
    // Error for spec-1 repositories, unknown branches, and storages that
    // cannot compare-and-swap.
    static std::shared_ptr<IcechunkSession> open(std::shared_ptr<Store> storage,
                                                 const std::string& branch = "main");
    // The same with the staged changes applying to `base_snapshot`, the
    // branch's tip or one of its ancestors, as in a session opened when that
    // snapshot was the tip: commit() rebases over the commits since, or
    // fails with CommitConflict. Error when `base_snapshot` is not in the
    // branch's history.
    static std::shared_ptr<IcechunkSession> open_at(std::shared_ptr<Store> storage,
                                                    const std::string& branch,
                                                    const std::string& base_snapshot);
    ~IcechunkSession() override;

    const std::string& branch() const;
    // The snapshot the staged changes apply to (the new one after commit).
    const std::string& base_snapshot() const;
    bool has_changes() const;

    // Writes the commit and moves the branch. When the branch moved since
    // the base was read, the changes are rebased on its new tip if they
    // touch other nodes and chunks than the commits in between (retried up
    // to `max_rebases` times); otherwise CommitConflict naming the node or
    // chunk. Returns the new snapshot id; the session then continues on it.
    // Error when nothing changed.
    std::string commit(const std::string& message, int max_rebases = 16);

    // Stages a virtual reference for chunk `key` (an array's chunk key):
    // `length` bytes at `offset` of the object at `location` (a URL under a
    // container the repository declares), with the object's last
    // modification time (seconds since 1970; 0: none) and ETag (empty: none)
    // that readers check.
    void put_virtual(const std::string& key, const std::string& location, uint64_t offset,
                     uint64_t length, uint32_t last_modified, const std::string& etag = "");

    std::string uri() const override;
    std::optional<ReadResult> read(const ReadRequest& request) override;
    std::vector<std::string> list_dir(const std::string& prefix) override;
    void put(const std::string& key, ByteView value) override;
    void erase(const std::string& key) override;
    // The storage's threads (chunks are written and read in parallel).
    void run_requests(size_t threads, const std::function<void()>& worker) override;
    StoreCapabilities capabilities() const override;

    struct Impl;

  private:
    IcechunkSession() = default;
    std::unique_ptr<Impl> impl_;
};

} // namespace zarr3::icechunk
