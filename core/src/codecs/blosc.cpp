// The `blosc` bytes->bytes codec (c-blosc 1.x, thread-safe *_ctx entry points).
#include "codecs/codecs_internal.hpp"

#include <blosc.h>
#include <cctype>
#include <climits>
#include <cstring>

namespace zarr3::codecs {
namespace {

bool compressor_available(const std::string& cname) {
    return blosc_compname_to_compcode(cname.c_str()) >= 0;
}

class BloscCodec : public BytesToBytesCodec {
  public:
    BloscCodec(std::string cname, int clevel, std::string shuffle, int64_t typesize,
               int64_t blocksize)
        : cname_(std::move(cname)), clevel_(clevel), shuffle_(std::move(shuffle)),
          typesize_(typesize), blocksize_(blocksize) {}

    std::string name() const override { return "blosc"; }

    Bytes encode(ByteView decoded) const override {
        Bytes out;
        encode_into(decoded, out);
        return out;
    }

    void encode_into(ByteView decoded, Bytes& out) const override {
        if (!compressor_available(cname_))
            throw Error("blosc: compressor \"" + cname_ +
                        "\" is not compiled into this c-blosc library (available: " +
                        blosc_list_compressors() + ")");
        if (decoded.size() > size_t(BLOSC_MAX_BUFFERSIZE))
            throw Error("blosc: cannot compress " + std::to_string(decoded.size()) +
                        " bytes (limit " + std::to_string(BLOSC_MAX_BUFFERSIZE) + ")");
        int shuffle = shuffle_ == "noshuffle" ? BLOSC_NOSHUFFLE
                      : shuffle_ == "shuffle" ? BLOSC_SHUFFLE
                                              : BLOSC_BITSHUFFLE;
        // c-blosc treats typesizes above 255 as 1.
        size_t typesize = typesize_ > 255 ? 1 : size_t(typesize_);
        out.resize(decoded.size() + BLOSC_MAX_OVERHEAD);
        int n = blosc_compress_ctx(clevel_, shuffle, typesize, decoded.size(), decoded.data(),
                                   out.data(), out.size(), cname_.c_str(), size_t(blocksize_), 1);
        if (n <= 0) throw Error("blosc: compression failed (error " + std::to_string(n) + ")");
        out.resize(size_t(n));
    }

    Bytes decode(ByteView in, std::optional<uint64_t> expected, uint64_t max_size) const override {
        if (in.size() < BLOSC_MIN_HEADER_LENGTH)
            throw FormatError("blosc: compressed value of " + std::to_string(in.size()) +
                              " bytes is shorter than the blosc header");
        size_t nbytes = 0;
        if (blosc_cbuffer_validate(in.data(), in.size(), &nbytes) != 0)
            throw FormatError("blosc: invalid blosc header or size fields (" +
                              std::to_string(in.size()) + " bytes)");
        if (nbytes > max_size)
            throw FormatError("blosc: header states " + std::to_string(nbytes) +
                              " decoded bytes, more than the limit of " + std::to_string(max_size));
        if (expected && nbytes != *expected)
            throw FormatError("blosc: header states " + std::to_string(nbytes) +
                              " decoded bytes, expected " + std::to_string(*expected));
        Bytes out(nbytes);
        if (nbytes == 0) return out;
        int n = blosc_decompress_ctx(in.data(), out.data(), out.size(), 1);
        if (n < 0 || size_t(n) != nbytes) {
            const char* lib = blosc_cbuffer_complib(in.data());
            std::string msg = "blosc: decompression failed (error " + std::to_string(n) + ")";
            if (lib) msg += std::string(" for data compressed with ") + lib;
            if (lib) { // "BloscLZ", "LZ4", "Snappy", "Zlib", "Zstd": lower case = compressor name
                std::string cn(lib);
                for (char& ch : cn)
                    ch = char(std::tolower(static_cast<unsigned char>(ch)));
                if (!compressor_available(cn))
                    msg += ", a compressor not compiled into this c-blosc library (available: " +
                           std::string(blosc_list_compressors()) + ")";
            }
            throw FormatError(msg);
        }
        return out;
    }

    bool decode_into(ByteView in, uint8_t* out, uint64_t size) const override {
        // A valid header stating exactly `size` bytes: decode in place, else fall back.
        size_t nbytes = 0;
        if (in.size() < BLOSC_MIN_HEADER_LENGTH || size == 0 ||
            blosc_cbuffer_validate(in.data(), in.size(), &nbytes) != 0 || nbytes != size)
            return false;
        const int n = blosc_decompress_ctx(in.data(), out, size, 1);
        return n >= 0 && size_t(n) == size;
    }

    nlohmann::json to_json() const override {
        return {{"name", "blosc"},
                {"configuration",
                 {{"cname", cname_},
                  {"clevel", clevel_},
                  {"shuffle", shuffle_},
                  {"typesize", typesize_},
                  {"blocksize", blocksize_}}}};
    }

  private:
    std::string cname_;
    int clevel_;
    std::string shuffle_;
    int64_t typesize_;
    int64_t blocksize_;
};

} // namespace

std::shared_ptr<BytesToBytesCodec> make_blosc(const nlohmann::json& config,
                                              const std::string& where) {
    const char* c = "blosc";
    auto obj =
        config_object(config, c, where, {"cname", "clevel", "shuffle", "typesize", "blocksize"});
    std::string cname =
        get_choice(obj, "cname", c, where, {"lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib"},
                   std::nullopt);
    int clevel = int(get_int(obj, "clevel", c, where, 0, 9, std::nullopt));
    std::string shuffle =
        get_choice(obj, "shuffle", c, where, {"noshuffle", "shuffle", "bitshuffle"}, std::nullopt);
    int64_t typesize = get_int(obj, "typesize", c, where, 1, INT_MAX, 1);
    int64_t blocksize = get_int(obj, "blocksize", c, where, 0, INT_MAX, 0);
    return std::make_shared<BloscCodec>(cname, clevel, shuffle, typesize, blocksize);
}

} // namespace zarr3::codecs
