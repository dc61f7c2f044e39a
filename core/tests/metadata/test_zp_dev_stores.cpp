// Stores written by zarr-python's development line (data/zp-dev, made by make_stores.py)
// read bit-exact: datetime64/timedelta64, fixed_length_utf32, null_terminated_bytes,
// scale_offset, zstd with a checksum, rectilinear grids (plain and sharded), string with
// vlen-utf8 + zstd.
#include "test_util.hpp"
#include "zarr3/array.hpp"

#include <cstring>
#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_metadata_test_zp_dev_stores {

using namespace zarr3;
using nlohmann::json;

namespace {

const std::string kDir = std::string(ZARR3_SOURCE_DIR) + "/data/zp-dev";

json expected() {
    return testutil::read_json(kDir + "/expected.json");
}

std::shared_ptr<Store> store() {
    return std::make_shared<FileStore>(kDir + "/zp_dev.zarr", false);
}

Bytes read_all(const Array& a) {
    const auto& m = a.metadata();
    Bytes got(checked_product(m.shape, "n") * m.dtype.size + 1, 0xAB);
    a.read(Selection::all(m.shape), got.data());
    EXPECT_EQ(got.back(), 0xAB) << "wrote past the buffer";
    got.pop_back();
    return got;
}

// Expected values (a JSON list) as little-endian elements of `dt`.
Bytes encode_values(const json& values, const DataType& dt) {
    Bytes out;
    for (const auto& v : values) {
        const size_t at = out.size();
        out.resize(at + dt.size);
        if (dt.kind == DTypeKind::Float && dt.size == 4) {
            const float f = v.get<float>();
            std::memcpy(out.data() + at, &f, 4);
        } else if (dt.kind == DTypeKind::Float) {
            const double d = v.get<double>();
            std::memcpy(out.data() + at, &d, 8);
        } else {
            const int64_t i = v.get<int64_t>();
            std::memcpy(out.data() + at, &i, dt.size);
        }
    }
    return out;
}

} // namespace

TEST(ZpDevStores, NumericAndTemporalArraysReadBitExact) {
    const json ex = expected();
    auto s = store();
    for (const char* name :
         {"time", "temp", "dt_ms", "td_min", "scaled", "checked", "rect", "rect_shard"}) {
        SCOPED_TRACE(name);
        const json& e = ex.at(name);
        auto a = Array::open(s, name);
        const auto& m = a->metadata();
        EXPECT_EQ(m.shape, e["shape"].get<Shape>());
        EXPECT_EQ(data_type_to_json(m.dtype), e["data_type"]);
        const json& values = e.contains("int64") ? e["int64"] : e["values"];
        EXPECT_EQ(read_all(*a), encode_values(values, m.dtype));
    }
}

TEST(ZpDevStores, TemporalTypesAndNaT) {
    auto s = store();
    auto t = Array::open(s, "time");
    EXPECT_TRUE(t->metadata().dtype.is_datetime());
    EXPECT_EQ(t->metadata().dtype.time_unit, "s");
    auto d = Array::open(s, "dt_ms");
    EXPECT_EQ(d->metadata().dtype.time_scale, 10u);
    EXPECT_EQ(fill_value_to_json(d->metadata().fill_value, d->metadata().dtype), json("NaT"));
    const Bytes v = read_all(*d);
    int64_t second = 0;
    std::memcpy(&second, v.data() + 8, 8);
    EXPECT_EQ(second, kNaT);
    EXPECT_FALSE(Array::open(s, "td_min")->metadata().dtype.is_datetime());
}

TEST(ZpDevStores, TextArrays) {
    const json ex = expected();
    auto s = store();
    for (const char* name : {"names", "tags"}) {
        SCOPED_TRACE(name);
        auto a = Array::open(s, name);
        const auto& dt = a->metadata().dtype;
        EXPECT_EQ(data_type_to_json(dt), ex[name]["data_type"]);
        const Bytes v = read_all(*a);
        std::vector<std::string> text;
        for (size_t i = 0; i < v.size(); i += dt.size) {
            if (dt.kind == DTypeKind::Utf32) {
                text.push_back(utf32_to_utf8(v.data() + i, dt.size));
            } else {
                size_t n = 0;
                while (n < dt.size && v[i + n])
                    ++n;
                text.emplace_back(reinterpret_cast<const char*>(v.data() + i), n);
            }
        }
        EXPECT_EQ(text, ex[name]["text"].get<std::vector<std::string>>());
    }
}

TEST(ZpDevStores, VlenStringArrayReadsExactly) {
    const json ex = expected()["vlen"];
    auto s = store();
    auto a = Array::open(s, "vlen");
    EXPECT_EQ(data_type_to_json(a->metadata().dtype), ex["data_type"]);
    EXPECT_EQ(a->metadata().codec_names(), (std::vector<std::string>{"vlen-utf8", "zstd"}));
    EXPECT_EQ(a->read_strings(Selection::all(a->metadata().shape)),
              ex["text"].get<std::vector<std::string>>());
    auto root = Group::open(s, "");
    const auto names = root->array_names();
    EXPECT_NE(std::find(names.begin(), names.end(), "vlen"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "temp"), names.end());
}

TEST(ZpDevStores, ChecksumMismatchNamesTheChunk) {
    testutil::TempDir tmp;
    std::filesystem::copy(kDir + "/zp_dev.zarr/checked", tmp.path / "checked",
                          std::filesystem::copy_options::recursive);
    std::filesystem::copy(kDir + "/zp_dev.zarr/zarr.json", tmp.path / "zarr.json");
    const auto chunk = tmp.path / "checked" / "c" / "1" / "0";
    Bytes b = testutil::read_file(chunk.string());
    ASSERT_GT(b.size(), 4u);
    b[b.size() - 1] ^= 0x5a; // the frame's content checksum
    std::ofstream(chunk, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    auto a = Array::open(std::make_shared<FileStore>(tmp.str(), false), "checked");
    try {
        read_all(*a);
        FAIL() << "no error";
    } catch (const FormatError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("checked/c/1/0"), std::string::npos) << msg;
        EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;
    }
}

}  // namespace ut_metadata_test_zp_dev_stores
