// zarr3::Store over GDAL's virtual file systems (local files, /vsimem/,
// /vsicurl/, /vsis3/, /vsizip/, ...).
#pragma once

#include "zarr3/store.hpp"

#include <atomic>
#include <string>

namespace zarr3drv {

class VSIStore : public zarr3::Store {
  public:
    // `root` is the store folder or URL; a trailing "/" is dropped.
    explicit VSIStore(std::string root, bool writable = false);

    std::string uri() const override { return root_; }
    std::optional<zarr3::Bytes> get(const std::string& key) override;
    std::optional<std::vector<zarr3::Bytes>>
    get_ranges(const std::string& key, const std::vector<zarr3::ByteRange>& ranges) override;
    std::optional<uint64_t> size(const std::string& key) override;
    // Writes "<key>.tmp.<pid>.<n>" then renames it into place; falls back to a
    // direct write where the file system cannot rename (e.g. /vsis3/).
    void put(const std::string& key, zarr3::ByteView value) override;
    void erase(const std::string& key) override;
    std::vector<std::string> list_dir(const std::string& prefix) override;
    bool writable() const override { return writable_; }

    std::string path_of(const std::string& key) const;

  private:
    void write_file(const std::string& path, zarr3::ByteView value, const std::string& key) const;
    std::string root_;
    bool writable_;
    std::atomic<uint64_t> counter_{0};
};

} // namespace zarr3drv
