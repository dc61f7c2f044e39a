// MaintenanceLock: the repository's status ReadOnly while expire or gc runs.
#include "icechunk/writer_detail.hpp"
#include "zarr3/icechunk_maintenance.hpp"

#include <cerrno>
#include <csignal>
#include <unistd.h>

namespace zarr3::icechunk {
using namespace wdetail;

namespace {

constexpr const char* kPrefix = "gdal-zarr3 maintenance: ";

std::string host_name() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
    return buf;
}

// True when `reason` is a maintenance status of this host whose process is
// gone (killed): it may be taken over.
bool abandoned(const std::string& reason) {
    if (reason.rfind(kPrefix, 0) != 0) return false;
    const size_t p = reason.find(" by pid "), h = reason.find(" on host ");
    if (p == std::string::npos || h == std::string::npos || h < p) return false;
    if (reason.substr(h + 9) != host_name()) return false;
    const std::string pid = reason.substr(p + 8, h - p - 8);
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos)
        return false;
    const pid_t n = pid_t(std::stol(pid));
    return n != ::getpid() && ::kill(n, 0) != 0 && errno == ESRCH;
}

void set_status(generated::RepoT& repo, generated::RepoAvailability a, const std::string& reason) {
    repo.status = std::make_unique<generated::RepoStatusT>();
    repo.status->availability = a;
    repo.status->set_at = now_us();
    repo.status->limited_availability_reason = reason;
    generated::RepoStatusChangedUpdateT up;
    up.status = std::make_unique<generated::RepoStatusT>(*repo.status);
    generated::UpdateTypeUnion u;
    u.Set(std::move(up));
    push_update(repo, std::move(u));
}

bool is_online(const generated::RepoT& repo) {
    return !repo.status || repo.status->availability == generated::RepoAvailability::Online;
}

} // namespace

MaintenanceLock::MaintenanceLock(std::shared_ptr<Store> storage, const std::string& what)
    : storage_(std::move(storage)),
      reason_(kPrefix + what + " by pid " + std::to_string(::getpid()) + " on host " +
              host_name()) {
    const std::string where = join_key(storage_->uri(), "repo");
    update_repo(*storage_, [&](generated::RepoT& repo) {
        took_over_ = false;
        if (!is_online(repo)) {
            if (!abandoned(repo.status->limited_availability_reason))
                require_online(repo, where, what);
            took_over_ = true;
        }
        set_status(repo, generated::RepoAvailability::ReadOnly, reason_);
    });
    held_ = true;
    kill_point("maintenance-readonly");
}

void MaintenanceLock::release() {
    if (!held_) return;
    held_ = false;
    update_repo(*storage_, [&](generated::RepoT& repo) {
        if (is_online(repo) || repo.status->limited_availability_reason != reason_)
            throw Error(join_key(storage_->uri(), "repo") +
                        ": the repository's status was changed by someone else during the "
                        "maintenance; it is left as it is");
        set_status(repo, generated::RepoAvailability::Online, "");
    });
}

MaintenanceLock::~MaintenanceLock() {
    try {
        release();
    } catch (const std::exception&) {
        // An error is already on its way; the status stays ReadOnly (a later
        // expire or gc of this host takes it over).
    }
}

} // namespace zarr3::icechunk
