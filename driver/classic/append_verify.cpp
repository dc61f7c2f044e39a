// Checking that an append's step is what is stored (append_verify.hpp).
#include "classic/append_verify.hpp"

#include "mapping/gdal_types.hpp"
#include "zarr3/array.hpp"
#include "zarr3/array_lock.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

namespace zarr3drv {

namespace {

constexpr uint64_t kCompareBudget = 16ull << 20; // source bytes compared at a time

// Whether the pixels of [start, start + count) of `a` are the source's.
bool SamePixels(zarr3::Array& a, const AppendedStep& step, GDALDataset* src,
                const AppendValues& values) {
    const auto& m = a.metadata();
    const GDALDataType gt = GDALTypeFor(m.dtype);
    const size_t gsize = static_cast<size_t>(GDALGetDataTypeSizeBytes(gt));
    const uint64_t W = m.shape[2], H = m.shape[1], n = step.count;
    const uint64_t rows =
        std::max<uint64_t>(1, kCompareBudget / std::max<uint64_t>(1, W * gsize * n));
    std::vector<GByte> buf, mine, stored;
    for (uint64_t y0 = 0; y0 < H; y0 += rows) {
        const uint64_t h = std::min(rows, H - y0);
        const size_t count = static_cast<size_t>(n * h * W);
        buf.resize(count * gsize);
        ReadSourceRows(src, static_cast<int>(y0), static_cast<int>(W), static_cast<int>(h), gt,
                       values, buf);
        const GByte* own = buf.data();
        if (!SameRepresentation(m.dtype)) {
            mine.resize(count * m.dtype.size);
            NarrowFromGDAL(m.dtype, buf.data(), mine.data(), count);
            own = mine.data();
        }
        stored.resize(count * m.dtype.size);
        a.read(zarr3::Selection{{step.start, y0, 0}, {n, h, W}, {}}, stored.data());
        if (std::memcmp(stored.data(), own, stored.size()) != 0) return false;
    }
    return true;
}

// Whether the coordinate holds this append's values (true without one).
bool SameCoordinate(const std::shared_ptr<zarr3::Store>& fresh, const AppendedStep& step) {
    if (step.dim.empty() || !step.coord_values) return true;
    zarr3::NodeSnapshot seen;
    auto c = zarr3::open_array_fresh(fresh, step.dim, seen);
    if (c->metadata().rank() != 1 || c->metadata().shape[0] < step.start + step.count) return false;
    zarr3::Bytes now(step.coord_values->size());
    c->read(zarr3::Selection{{step.start}, {step.count}, {}}, now.data());
    return now == *step.coord_values;
}

} // namespace

std::chrono::milliseconds WriteClock::settle() const {
    const auto twice = std::chrono::duration_cast<std::chrono::milliseconds>(took_ * 2);
    return std::clamp(twice, std::chrono::milliseconds(250), std::chrono::milliseconds(10000));
}

std::string StoredStep(const std::function<std::shared_ptr<zarr3::Store>()>& fresh_store,
                       const AppendedStep& step, GDALDataset* src, const AppendValues& values,
                       std::chrono::milliseconds settle) {
    std::this_thread::sleep_for(settle);
    const auto fresh = fresh_store();
    zarr3::NodeSnapshot seen;
    auto a = zarr3::open_array_fresh(fresh, step.array_path, seen);
    const std::string at = "index " + std::to_string(step.start) +
                           (step.count > 1 ? " (" + std::to_string(step.count) + " steps)" : "");
    const std::string race = "another append wrote the same step at the same time (a store "
                             "without locks or conditional writes keeps the last writer of each "
                             "object)";
    if (a->metadata().rank() != 3 || a->metadata().shape[0] < step.start + step.count)
        return a->describe() + ": the array does not reach " + at + ": " + race +
               "; this step is not stored";
    const bool coord = SameCoordinate(fresh, step);
    const bool pixels = SamePixels(*a, step, src, values);
    if (coord && pixels) return {};
    if (!coord && !pixels)
        return a->describe() + ": " + at + " holds another append's step: " + race +
               "; this step is not stored";
    return a->describe() + ": " + at + " holds " +
           (coord ? "this append's " + step.dim + " value but another append's pixels"
                  : "this append's pixels but another append's " + step.dim + " value") +
           ": " + race + "; the store is inconsistent at that index (not this step)";
}

} // namespace zarr3drv
