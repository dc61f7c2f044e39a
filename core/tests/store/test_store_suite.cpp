// The shared store cases (store_suite.hpp) over MemoryStore and FileStore and
// the core adapters around each (forwarding, counting, consolidating), the
// forwarding check itself, and the atomic-write helper both file-writing
// stores use.
#include "store/store_suite.hpp"
#include "test_util.hpp"
#include "zarr3/array.hpp"
#include "zarr3/consolidated.hpp"
#include "zarr3/counting_store.hpp"

#include <filesystem>
#include <map>
#include <unistd.h>

using namespace zarr3;

namespace store_suite {

namespace {

Kind memory_kind() {
    return Kind{"Memory", [] { return Fresh{std::make_shared<MemoryStore>(), nullptr}; }};
}

Kind file_kind() {
    return Kind{
        "File",
        [] {
            auto dir = std::make_shared<testutil::TempDir>();
            return Fresh{std::make_shared<FileStore>(dir->str()), [dir]() mutable { dir.reset(); }};
        },
        true, true};
}

// `base`'s store seen through the adapter `wrap` makes.
Kind adapted(const Kind& base, const std::string& name, Wrap wrap) {
    Kind k = base;
    k.name = name + "Over" + base.name;
    k.wrap = wrap;
    k.make = [make = base.make, wrap] {
        Fresh f = make();
        f.store = wrap(f.store);
        return f;
    };
    return k;
}

std::vector<Kind> core_kinds() {
    std::vector<Kind> out;
    const Wrap forwarding = [](std::shared_ptr<Store> s) {
        return std::make_shared<ForwardingStore>(std::move(s));
    };
    const Wrap counting = [](std::shared_ptr<Store> s) {
        return std::make_shared<CountingStore>(std::move(s));
    };
    const Wrap consolidating = [](std::shared_ptr<Store> s) {
        return consolidating_store(std::move(s));
    };
    for (const Kind& base : {memory_kind(), file_kind()}) {
        out.push_back(base);
        out.push_back(adapted(base, "Forwarding", forwarding));
        out.push_back(adapted(base, "Counting", counting));
        out.push_back(adapted(base, "Consolidating", consolidating));
    }
    return out;
}

} // namespace

INSTANTIATE_TEST_SUITE_P(Core, StoreSuite, testing::ValuesIn(core_kinds()), kind_name);

// An adapter that passes on only the reads and writes: the forwarding check
// the suite runs over every adapter finds what it drops.
class ForgetfulAdapter final : public Store {
  public:
    explicit ForgetfulAdapter(std::shared_ptr<Store> inner) : inner_(std::move(inner)) {}
    std::string uri() const override { return inner_->uri(); }
    std::optional<ReadResult> read(const ReadRequest& r) override { return inner_->read(r); }
    void put(const std::string& k, ByteView v) override { inner_->put(k, v); }
    void erase(const std::string& k) override { inner_->erase(k); }
    std::vector<std::string> list_dir(const std::string& p) override { return inner_->list_dir(p); }

  private:
    std::shared_ptr<Store> inner_;
};

// A ForwardingStore that overrides run_requests and runs the worker itself.
class OwnThreadsAdapter final : public ForwardingStore {
  public:
    using ForwardingStore::ForwardingStore;
    void run_requests(size_t, const std::function<void()>& worker) override { worker(); }
};

TEST(StoreForwarding, AnAdapterThatForgetsToForwardIsCaught) {
    const std::string forgetful = forwarding_problems(
        [](std::shared_ptr<Store> s) { return std::make_shared<ForgetfulAdapter>(s); }, false);
    for (const char* what : {"max_in_flight", "request_threads", "run_requests", "lock"})
        EXPECT_NE(forgetful.find(what), std::string::npos) << what << " in '" << forgetful << "'";
    const std::string own = forwarding_problems(
        [](std::shared_ptr<Store> s) { return std::make_shared<OwnThreadsAdapter>(s); }, false);
    EXPECT_EQ(own, " run_requests");
    EXPECT_EQ(
        forwarding_problems(
            [](std::shared_ptr<Store> s) { return std::make_shared<ForwardingStore>(s); }, false),
        "");
}

TEST(StoreForwarding, CountingStoreCountsEachReadKind) {
    auto mem = std::make_shared<MemoryStore>();
    mem->put("a", Bytes{1, 2, 3, 4});
    CountingStore c(mem);
    c.get("a");
    c.get_bounded("a", 10);
    c.get_ranges("a", {RangeFromStart{0, 2}, RangeSuffix{1}});
    c.size("a");
    const auto n = c.counts();
    EXPECT_EQ(n.gets, 2u);
    EXPECT_EQ(n.range_calls, 1u);
    EXPECT_EQ(n.ranges, 2u);
    EXPECT_EQ(n.sizes, 1u);
    EXPECT_EQ(n.bytes, 4u + 4u + 3u);
    EXPECT_EQ(c.log(), (std::vector<std::string>{"get a", "get a", "ranges a 0+2 -1", "size a"}));
}

TEST(StoreForwarding, ReadFromMemoryChecksLimitAndRanges) {
    const Bytes v(100, 7);
    const auto r = read_from_memory(v, ReadRequest::byte_ranges("k", {RangeSuffix{10}}), "m/k");
    EXPECT_EQ(r.total_size, 100u);
    ASSERT_EQ(r.data.size(), 1u);
    EXPECT_EQ(r.data[0], Bytes(10, 7));
    EXPECT_THROW(read_from_memory(v, ReadRequest::value("k", 99), "m/k"), FormatError);
    EXPECT_THROW(read_from_memory(v, ReadRequest::byte_ranges("k", {RangeSuffix{101}}), "m/k"),
                 FormatError);
}

} // namespace store_suite

namespace {

struct FakeFs {
    std::map<std::string, Bytes> files;
    std::string write_error, rename_error;
    std::vector<std::string> removed;
    AtomicWriteOps ops() {
        return {[this](const std::string& tmp, ByteView v) -> std::string {
                    files[tmp] = Bytes(v.begin(), v.end());
                    return write_error;
                },
                [this](const std::string& from, const std::string& to) -> std::string {
                    if (!rename_error.empty()) return rename_error;
                    files[to] = files[from];
                    files.erase(from);
                    return {};
                },
                [this](const std::string& tmp) {
                    removed.push_back(tmp);
                    files.erase(tmp);
                }};
    }
};

TEST(AtomicWrite, WritesTemporaryThenRenames) {
    FakeFs fs;
    write_atomically("root/a/c/0", Bytes{1, 2, 3}, fs.ops());
    EXPECT_EQ(fs.files.size(), 1u);
    EXPECT_EQ(fs.files["root/a/c/0"], (Bytes{1, 2, 3}));
    EXPECT_TRUE(fs.removed.empty());
}

TEST(AtomicWrite, FailedWriteRemovesTemporaryAndKeepsOldValue) {
    FakeFs fs;
    fs.files["root/k"] = Bytes{7};
    fs.write_error = "No space left on device";
    try {
        write_atomically("root/k", Bytes{1, 2}, fs.ops());
        FAIL() << "no error";
    } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_EQ(m.rfind("root/k: ", 0), 0u) << m;
        EXPECT_NE(m.find("No space left on device"), std::string::npos) << m;
        EXPECT_NE(m.find("the old value is kept"), std::string::npos) << m;
    }
    ASSERT_EQ(fs.removed.size(), 1u);
    EXPECT_EQ(temp_file_pid(fs.removed[0]), static_cast<long>(::getpid()));
    EXPECT_EQ(fs.files, (std::map<std::string, Bytes>{{"root/k", Bytes{7}}}));
}

TEST(AtomicWrite, FailedRenameRemovesTemporary) {
    FakeFs fs;
    fs.files["root/k"] = Bytes{7};
    fs.rename_error = "Permission denied";
    EXPECT_THROW(write_atomically("root/k", Bytes{1, 2}, fs.ops()), Error);
    EXPECT_EQ(fs.removed.size(), 1u);
    EXPECT_EQ(fs.files, (std::map<std::string, Bytes>{{"root/k", Bytes{7}}}));
}

TEST(AtomicWrite, TemporaryNamesAreUniqueAndCarryThePid) {
    const std::string a = temp_path_for("d/x"), b = temp_path_for("d/x");
    EXPECT_NE(a, b);
    EXPECT_EQ(a.rfind("d/x.tmp.", 0), 0u) << a;
    EXPECT_EQ(temp_file_pid(a), static_cast<long>(::getpid()));
    EXPECT_EQ(temp_file_pid("d/x"), 0);
    EXPECT_EQ(temp_file_pid("d/x.tmp.otherhost-x.123.4"), 0);
    EXPECT_EQ(temp_file_pid(a + "x"), 0);
}

TEST(ByteRanges, TextAndStart) {
    EXPECT_EQ(range_text(RangeFromStart{3, 4}), "3+4");
    EXPECT_EQ(range_text(RangeSuffix{9}), "-9");
    EXPECT_EQ(range_start(RangeSuffix{9}, 10, "w"), 1u);
    EXPECT_EQ(range_start(RangeFromStart{3, 7}, 10, "w"), 3u);
    EXPECT_THROW(range_start(RangeFromStart{3, 8}, 10, "w"), FormatError);
    EXPECT_THROW(range_start(RangeSuffix{11}, 10, "w"), FormatError);
    EXPECT_EQ(range_length(RangeSuffix{9}), 9u);
    EXPECT_TRUE(is_suffix(RangeSuffix{9}));
    EXPECT_FALSE(is_suffix(RangeFromStart{0, 9}));
}

TEST(NotFoundError, OpeningAMissingNodeIsNotFound) {
    auto store = std::make_shared<MemoryStore>();
    EXPECT_THROW(Array::open(store, "nothing"), NotFound);
    EXPECT_THROW(Group::open(store, "nothing"), NotFound);
    store->put("g/zarr.json", Bytes{'{'}); // present but broken: another error
    try {
        Group::open(store, "g");
        FAIL() << "a broken document opened";
    } catch (const NotFound&) {
        FAIL() << "a broken document reported as absent";
    } catch (const Error&) {
    }
}

} // namespace
