// The shared store cases (core/tests/store_suite.hpp) over the driver's
// VSIStore: an in-memory /vsimem/ folder and a local folder.
#include "store_suite.hpp"
#include "test_util.hpp"
#include "vsi_store.hpp"

#include "cpl_vsi.h"

#include <atomic>
#include <string>

namespace store_suite {

namespace {

Fresh vsimem_store() {
    static std::atomic<int> n{0};
    const std::string root = "/vsimem/zarr3-store-suite-" + std::to_string(n++);
    return Fresh{std::make_shared<zarr3drv::VSIStore>(root, true),
                 [root] { VSIRmdirRecursive(root.c_str()); }};
}

Fresh local_store() {
    auto dir = std::make_shared<testutil::TempDir>();
    return Fresh{std::make_shared<zarr3drv::VSIStore>(dir->str(), true),
                 [dir]() mutable { dir.reset(); }};
}

} // namespace

// /vsimem/ versions are size and modification time in seconds: two values of
// one size written within a second look alike.
INSTANTIATE_TEST_SUITE_P(Vsi, StoreSuite,
                         testing::Values(Kind{"VsiMem", vsimem_store, false, false},
                                         Kind{"VsiLocal", local_store, true, true}),
                         kind_name);

} // namespace store_suite
