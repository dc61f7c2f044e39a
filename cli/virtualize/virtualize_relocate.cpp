// zarr3 virtualize REPO --relocate OLD_PREFIX NEW_PREFIX: every virtual
// reference of a branch's tip whose URL starts with OLD_PREFIX rewritten to
// start with NEW_PREFIX, as one commit (the new container declared).
#include "virtualize_plan.hpp"

#include "zarr3/array.hpp"
#include "zarr3/icechunk_write.hpp"

#include <filesystem>
#include <ostream>

namespace fs = std::filesystem;

namespace zarr3virt {

namespace {

using zarr3::Error;
namespace ice = zarr3::icechunk;

// Records the virtual reference of each chunk read (its bytes are not read).
struct RefCapture : ice::VirtualResolver {
    std::optional<ice::VirtualRef> seen;
    std::vector<zarr3::Bytes> read(const ice::VirtualRef& ref,
                                   const std::vector<zarr3::RangeFromStart>& ranges,
                                   const std::string&) override {
        seen = ref;
        std::vector<zarr3::Bytes> out;
        for (const auto& r : ranges)
            out.emplace_back(size_t(r.length));
        return out;
    }
};

void collect_arrays(const std::shared_ptr<zarr3::Group>& g, std::vector<std::string>& out) {
    for (const auto& a : g->array_names())
        out.push_back(zarr3::join_key(g->path(), a));
    for (const auto& c : g->group_names())
        collect_arrays(g->open_group(c), out);
}

// Every chunk index of `a`'s grid, in order.
template <class F> void for_each_chunk(const zarr3::Array& a, F f) {
    const auto& grid = a.metadata().grid;
    const size_t rank = a.metadata().shape.size();
    std::vector<uint64_t> n(rank), idx(rank, 0);
    for (size_t d = 0; d < rank; ++d)
        if ((n[d] = grid.axis(d).num_chunks()) == 0) return;
    for (;;) {
        f(idx);
        size_t d = rank;
        while (d > 0 && ++idx[d - 1] == n[d - 1])
            idx[--d] = 0;
        if (d == 0) return;
    }
}

} // namespace

int relocate(const Options& o, std::ostream& out) {
    const std::string root = fs::absolute(o.repo).lexically_normal().string();
    if (!fs::is_regular_file(fs::path(root) / "repo"))
        throw Error(o.repo + ": not an Icechunk repository of spec version 2 (no repo file)");
    zarr3::virtualize::reference_url(o.relocate_to, "x"); // checks the new prefix's form
    if (o.relocate_from.empty() || o.relocate_from.back() != '/')
        throw Error("--relocate: OLD_PREFIX '" + o.relocate_from + "' must end in '/'");
    auto storage = std::make_shared<zarr3::FileStore>(root, true);
    auto capture = std::make_shared<RefCapture>();
    auto tip = ice::IcechunkStore::open(storage, {.branch = o.branch}, capture);
    auto session = ice::IcechunkSession::open(storage, o.branch);
    std::vector<std::string> arrays;
    collect_arrays(zarr3::Group::open(tip, ""), arrays);
    size_t moved = 0;
    for (const auto& path : arrays) {
        const auto a = zarr3::Array::open(tip, path);
        for_each_chunk(*a, [&](const std::vector<uint64_t>& idx) {
            const std::string key = a->chunk_key(idx);
            capture->seen.reset();
            if (!tip->get_ranges(key, {zarr3::RangeFromStart{0, 1}}) || !capture->seen) return;
            const auto& r = *capture->seen;
            if (r.location.rfind(o.relocate_from, 0) != 0) return;
            session->put_virtual(key, o.relocate_to + r.location.substr(o.relocate_from.size()),
                                 r.offset, r.length, r.last_modified, r.etag);
            ++moved;
        });
    }
    if (!moved)
        throw Error(o.repo + ": no virtual reference of branch " + o.branch + " starts with " +
                    o.relocate_from + "; nothing written");
    const auto declared = ice::declared_virtual_containers(*storage);
    if (std::find(declared.begin(), declared.end(), o.relocate_to) == declared.end())
        ice::declare_virtual_container(*storage, o.relocate_to);
    const std::string id = session->commit(
        o.message.empty() ? "virtualize --relocate " + o.relocate_from + " -> " + o.relocate_to
                          : o.message);
    out << o.repo << ": " << moved << " reference(s) moved from " << o.relocate_from << " to "
        << o.relocate_to << "\n  commit " << id << " on branch " << o.branch << "\n";
    return 0;
}

} // namespace zarr3virt
