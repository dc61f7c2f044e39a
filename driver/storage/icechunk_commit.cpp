// Commits of Icechunk repositories written through the driver (icechunk_commit.hpp).
#include "storage/icechunk_commit.hpp"

#include "error_boundary.hpp"
#include "storage/vsi_store.hpp"

#include "cpl_error.h"

#include <algorithm>

namespace zarr3drv {

CommittingStore::CommittingStore(std::shared_ptr<zarr3::icechunk::IcechunkSession> session,
                                 std::string root, std::string message)
    : ForwardingStore(session), session_(std::move(session)), root_(std::move(root)),
      message_(message.empty() ? std::string(kDefaultCommitMessage) : std::move(message)) {}

CommittingStore::~CommittingStore() {
    Commit();
}

void CommittingStore::put(const std::string& key, zarr3::ByteView value) {
    try {
        session_->put(key, value);
    } catch (...) {
        write_failed_ = true;
        throw;
    }
}

void CommittingStore::erase(const std::string& key) {
    try {
        session_->erase(key);
    } catch (...) {
        write_failed_ = true;
        throw;
    }
}

bool CommittingStore::Commit() {
    if (state_ != State::Open) return state_ == State::Discarded;
    const bool ok = ErrorBoundary(root_, [&] {
        if (!session_->has_changes()) return;
        if (write_failed_)
            throw zarr3::Error(root_ + ": nothing was committed to branch '" + session_->branch() +
                               "' (it stays where it was): a write into the repository failed "
                               "(see the error above)");
        try {
            session_->commit(message_);
        } catch (const zarr3::icechunk::CommitConflict& e) {
            throw zarr3::Error(root_ + ": the commit to branch '" + session_->branch() +
                               "' failed, the branch is unchanged: " + e.what());
        } catch (const std::exception& e) {
            throw zarr3::Error(root_ + ": the commit to branch '" + session_->branch() +
                               "' failed (the branch stays where it was): " + e.what());
        }
    });
    if (!ok) state_ = State::Failed;
    return ok;
}

namespace {
CommittingStore* CommittingStoreOf(zarr3::Store* store) {
    while (store) {
        if (auto* committing = dynamic_cast<CommittingStore*>(store)) return committing;
        auto* fwd = dynamic_cast<zarr3::ForwardingStore*>(store);
        store = fwd ? fwd->inner().get() : nullptr;
    }
    return nullptr;
}
} // namespace

bool CommitIfIcechunk(zarr3::Store* store) {
    auto* committing = CommittingStoreOf(store);
    return !committing || committing->Commit();
}

void DiscardIfIcechunk(zarr3::Store* store) {
    if (auto* committing = CommittingStoreOf(store)) committing->Discard();
}

bool IsIcechunkStore(const zarr3::Store* store) {
    while (store) {
        if (dynamic_cast<const zarr3::icechunk::IcechunkStore*>(store) ||
            dynamic_cast<const zarr3::icechunk::IcechunkSession*>(store))
            return true;
        const auto* fwd = dynamic_cast<const zarr3::ForwardingStore*>(store);
        store = fwd ? fwd->inner().get() : nullptr;
    }
    return false;
}

std::shared_ptr<zarr3::Store> WritableRepositoryStorage(const std::string& root) {
    auto storage = std::make_shared<VSIStore>(root, true);
    if (!storage->can_compare_and_swap())
        throw zarr3::Error(root +
                           ": cannot write an Icechunk repository here: committing needs a "
                           "conditional update of the 'repo' file: a lock shared by the writers "
                           "(local folders, /vsimem/) or a storage that takes If-Match with a "
                           "PUT (/vsis3/, /vsiaz/); this storage offers neither through GDAL; "
                           "nothing was written");
    return storage;
}

std::shared_ptr<zarr3::icechunk::IcechunkSession>
OpenBranchSession(const std::shared_ptr<zarr3::Store>& storage, const std::string& root,
                  const std::string& branch) {
    const auto repo = zarr3::icechunk::Repository::open(storage);
    const auto& branches = repo->branches();
    if (repo->spec_version() == 2 &&
        std::none_of(branches.begin(), branches.end(),
                     [&](const zarr3::icechunk::Ref& r) { return r.name == branch; }))
        throw zarr3::Error(root + ": no branch '" + branch +
                           "' in the repository; writers do not create branches: make it first "
                           "with `zarr3 branch " +
                           root + " " + branch + " [SNAPSHOT]`; nothing was written");
    return zarr3::icechunk::IcechunkSession::open(storage, branch);
}

std::shared_ptr<CommittingStore> OpenRepositoryForUpdate(const std::string& root,
                                                         const IcechunkVersion& version,
                                                         const char* message) {
    if (!version.tag.empty() || !version.snapshot.empty() || !version.as_of.empty())
        throw zarr3::Error(root + ": update access is refused when writing to a tag or a snapshot "
                                  "(TAG, SNAPSHOT, AS_OF: versions are read-only): commits go to a "
                                  "branch (BRANCH, default main)");
    auto session = OpenBranchSession(WritableRepositoryStorage(root), root,
                                     version.branch.empty() ? "main" : version.branch);
    return std::make_shared<CommittingStore>(session, root, message ? message : "");
}

} // namespace zarr3drv
