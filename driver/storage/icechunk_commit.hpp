// Writing Icechunk repositories through the driver: a dataset opened for
// update (or created) on a branch writes into an IcechunkSession
// (zarr3/icechunk_write.hpp) wrapped here so that releasing the store (the
// dataset closing, after its last flush) commits once when anything changed.
// The format (snapshots, manifests, the conditional update of `repo`) is in
// core; this file only chooses the branch and the message and reports.
#pragma once

#include "storage/icechunk_open.hpp"
#include "zarr3/icechunk_write.hpp"

#include <atomic>
#include <memory>
#include <string>

namespace zarr3drv {

// Default message of a commit made by closing a dataset.
inline constexpr const char* kDefaultCommitMessage = "gdal-zarr3: update";

// The session of a dataset opened for update; commits in its destructor
// (CPLError naming the repository and the cause when the commit fails: the
// branch then stays where it was).
class CommittingStore final : public zarr3::ForwardingStore {
  public:
    CommittingStore(std::shared_ptr<zarr3::icechunk::IcechunkSession> session, std::string root,
                    std::string message);
    ~CommittingStore() override;
    CommittingStore(const CommittingStore&) = delete;
    CommittingStore& operator=(const CommittingStore&) = delete;
    // Commits now when something changed; false after a CPLError. Later
    // writes go into the next commit. Nothing is committed once a write
    // into the session failed (a full disk, a cancelled copy): the dataset
    // would otherwise commit part of what it was asked to write. After a
    // failed commit, nothing more is committed (false, reported once).
    bool Commit();
    // Nothing of this session is committed, ever (a create that failed
    // half-way: its parts must not become a commit when the store is released).
    void Discard() { state_ = State::Discarded; }
    void put(const std::string& key, zarr3::ByteView value) override;
    void erase(const std::string& key) override;
    zarr3::icechunk::IcechunkSession& session() { return *session_; }

  private:
    std::shared_ptr<zarr3::icechunk::IcechunkSession> session_;
    std::string root_, message_;
    std::atomic<bool> write_failed_{false};
    enum class State { Open, Failed, Discarded } state_ = State::Open;
};

// Commits what was written into `store` when it is (or wraps) a
// CommittingStore: a dataset closing commits here, so that its Close()
// returns the result. True when nothing failed (or no repository).
bool CommitIfIcechunk(zarr3::Store* store);
// Discards what was written into `store` when it is (or wraps) a
// CommittingStore (a copy or create that failed part way).
void DiscardIfIcechunk(zarr3::Store* store);

// Whether `store` (or what it wraps) reads or writes an Icechunk repository
// (no .aux.xml is kept for one).
bool IsIcechunkStore(const zarr3::Store* store);

// The storage of the repository at `root` for writing: refused (Error naming
// the repository) where the `repo` file cannot be replaced conditionally
// (object stores: no conditional write through GDAL).
std::shared_ptr<zarr3::Store> WritableRepositoryStorage(const std::string& root);

// A session on branch `branch` of the repository in `storage` (at `root`).
// Writers never create branches: Error naming the branch and `zarr3 branch`
// when there is none of that name.
std::shared_ptr<zarr3::icechunk::IcechunkSession>
OpenBranchSession(const std::shared_ptr<zarr3::Store>& storage, const std::string& root,
                  const std::string& branch);

// A session on `version`'s branch (default main) of the repository at
// `root`, committing with `message` (default kDefaultCommitMessage) when
// released. Error for a tag, a snapshot or AS_OF ("writing to a tag or a
// snapshot"), and as WritableRepositoryStorage.
std::shared_ptr<CommittingStore> OpenRepositoryForUpdate(const std::string& root,
                                                         const IcechunkVersion& version,
                                                         const char* message);

} // namespace zarr3drv
