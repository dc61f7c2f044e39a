// Private to the codec implementations (and their unit tests): factories for
// each codec and helpers that validate "configuration" objects strictly.
#pragma once

#include "zarr3/codec.hpp"

#include <initializer_list>
#include <optional>
#include <string>

namespace zarr3::codecs {

// "<where>: codec \"<codec>\": "
std::string prefix(const std::string& where, const std::string& codec);

// Checks that `config` is null or an object whose members are all in `allowed`.
// Returns the object (an empty object for null).
nlohmann::json config_object(const nlohmann::json& config, const std::string& codec,
                             const std::string& where, std::initializer_list<const char*> allowed);

// Integer member in [lo, hi]; `def` when absent (FormatError when absent and no default).
int64_t get_int(const nlohmann::json& obj, const char* member, const std::string& codec,
                const std::string& where, int64_t lo, int64_t hi, std::optional<int64_t> def);
bool get_bool(const nlohmann::json& obj, const char* member, const std::string& codec,
              const std::string& where, std::optional<bool> def);
// String member that must be one of `choices`.
std::string get_choice(const nlohmann::json& obj, const char* member, const std::string& codec,
                       const std::string& where, std::initializer_list<const char*> choices,
                       std::optional<std::string> def);

// A bytes->bytes codec written back as {"name": name, "configuration": config} (no
// "configuration" when config is null): gzip, the checksums and the numcodecs compressors.
class ConfiguredBytesCodec : public BytesToBytesCodec {
  public:
    ConfiguredBytesCodec(std::string name, nlohmann::json config)
        : name_(std::move(name)), config_(std::move(config)) {}
    std::string name() const override { return name_; }
    nlohmann::json to_json() const override {
        nlohmann::json j = {{"name", name_}};
        if (!config_.is_null()) j["configuration"] = config_;
        return j;
    }

  protected:
    std::string name_;
    nlohmann::json config_;
};

std::shared_ptr<ArrayToArrayCodec> make_transpose(const nlohmann::json& config,
                                                  const ChunkSpec& spec, const std::string& where);
std::shared_ptr<ArrayToArrayCodec>
make_scale_offset(const nlohmann::json& config, const ChunkSpec& spec, const std::string& where);
std::shared_ptr<ArrayToArrayCodec> make_cast_value(const nlohmann::json& config,
                                                   const ChunkSpec& spec, const std::string& where);
std::shared_ptr<ArrayToBytesCodec> make_bytes(const nlohmann::json& config, const ChunkSpec& spec,
                                              const std::string& where);
std::shared_ptr<ArrayToBytesCodec> make_vlen_utf8(const nlohmann::json& config,
                                                  const std::string& where);
std::shared_ptr<BytesToBytesCodec> make_gzip(const nlohmann::json& config,
                                             const std::string& where);
std::shared_ptr<BytesToBytesCodec> make_zstd(const nlohmann::json& config,
                                             const std::string& where);
std::shared_ptr<BytesToBytesCodec> make_blosc(const nlohmann::json& config,
                                              const std::string& where);
// gzip (zlib == false) or the zlib format, written back as `name` with `config`.
std::shared_ptr<BytesToBytesCodec> make_deflate(bool zlib, int level, const std::string& name,
                                                const nlohmann::json& config);
// numcodecs.bitround, numcodecs.quantize, numcodecs.fixedscaleoffset, numcodecs.delta.
std::shared_ptr<ArrayToArrayCodec> make_numcodecs_filter(const std::string& name,
                                                         const nlohmann::json& config,
                                                         const ChunkSpec& spec,
                                                         const std::string& where);
// numcodecs.shuffle, .zlib, .gzip, .zstd, .blosc, .lz4 and the checksums.
std::shared_ptr<BytesToBytesCodec> make_numcodecs_bytes(const std::string& name,
                                                        const nlohmann::json& config,
                                                        const std::string& where);
// numcodecs.crc32, numcodecs.adler32 (zlib's), numcodecs.crc32c: a checksum at "location"
// ("start" by default; "end" for crc32c).
std::shared_ptr<BytesToBytesCodec> make_numcodecs_checksum(const std::string& name,
                                                           const nlohmann::json& config,
                                                           const std::string& where);
std::shared_ptr<BytesToBytesCodec> make_crc32c(const nlohmann::json& config,
                                               const std::string& where);

// Implementation variants, exposed so tests can check each one.
uint32_t crc32c_portable(ByteView data, uint32_t seed);
bool crc32c_hw_available();
uint32_t crc32c_hw(ByteView data, uint32_t seed); // only when crc32c_hw_available()
Bytes gzip_decode_zlib(ByteView in, std::optional<uint64_t> expected, uint64_t max_size,
                       bool zlib = false);
Bytes gzip_encode_zlib(ByteView in, int level, bool zlib = false);

// Copies a dense array of `out_shape` (C order) from `src`, where output axis k
// advances `src_strides[k]` bytes in the source. Elements are `elem` bytes.
void permute_copy(uint8_t* dst, const uint8_t* src, const Shape& out_shape,
                  const std::vector<uint64_t>& src_strides, size_t elem);

} // namespace zarr3::codecs
