// Icechunk writer: the virtual chunk containers of a repository's
// configuration (the repo file's FlexBuffers config, as Icechunk 2 writes it).
//
// Compiled alone (CMakeLists.txt: SKIP_UNITY_BUILD_INCLUSION) and before any
// flatbuffers header: copying the config's scalars goes through flexbuffers'
// number accessors, whose string conversions would otherwise need
// flatbuffers::ClassicLocale from libflatbuffers, which nothing links.
#define FLATBUFFERS_LOCALE_INDEPENDENT 0
#include "icechunk/writer_detail.hpp"

#include <flatbuffers/flexbuffers.h>

namespace zarr3::icechunk {
using namespace wdetail;

namespace {

// Copies FlexBuffers value `r` into `b` (under `key` inside a map).
void copy_value(flexbuffers::Builder& b, const char* key, const flexbuffers::Reference& r) {
    auto start_map = [&] { return key ? b.StartMap(key) : b.StartMap(); };
    auto start_vec = [&] { return key ? b.StartVector(key) : b.StartVector(); };
    if (r.IsMap()) {
        const auto m = r.AsMap();
        const auto keys = m.Keys();
        const auto values = m.Values();
        const size_t s = start_map();
        for (size_t i = 0; i < keys.size(); ++i)
            copy_value(b, keys[i].AsKey(), values[i]);
        b.EndMap(s);
    } else if (r.IsVector() && !r.IsString() && !r.IsBlob()) {
        const auto v = r.AsVector();
        const size_t s = start_vec();
        for (size_t i = 0; i < v.size(); ++i)
            copy_value(b, nullptr, v[i]);
        b.EndVector(s, false, false);
    } else if (r.IsString()) {
        const std::string v = r.AsString().str();
        if (key)
            b.String(key, v);
        else
            b.String(v);
    } else if (r.IsBool()) {
        if (key)
            b.Bool(key, r.AsBool());
        else
            b.Bool(r.AsBool());
    } else if (r.IsUInt()) {
        if (key)
            b.UInt(key, r.AsUInt64());
        else
            b.UInt(r.AsUInt64());
    } else if (r.IsInt()) {
        if (key)
            b.Int(key, r.AsInt64());
        else
            b.Int(r.AsInt64());
    } else if (r.IsFloat()) {
        if (key)
            b.Double(key, r.AsDouble());
        else
            b.Double(r.AsDouble());
    } else if (r.IsBlob()) {
        const auto blob = r.AsBlob();
        if (key)
            b.Blob(key, blob.data(), blob.size());
        else
            b.Blob(blob.data(), blob.size());
    } else {
        if (key)
            b.Null(key);
        else
            b.Null();
    }
}

// The container entry Icechunk writes: {name: null, store: ..., url_prefix}.
void write_container(flexbuffers::Builder& b, const std::string& prefix) {
    b.Map(prefix.c_str(), [&] {
        b.Null("name");
        if (prefix.rfind("file://", 0) == 0) {
            std::string path = prefix.substr(7);
            if (path.size() > 1 && path.back() == '/') path.pop_back();
            b.Map("store", [&] { b.String("local_file_system", path); });
        } else if (prefix.rfind("s3://", 0) == 0) {
            b.Map("store", [&] {
                b.Map("s3", [&] {
                    b.Bool("allow_http", false);
                    b.Bool("anonymous", false);
                    b.Null("endpoint_url");
                    b.Bool("force_path_style", false);
                    b.Null("network_stream_timeout_seconds");
                    b.Null("region");
                    b.Bool("requester_pays", false);
                });
            });
        } else if (prefix.rfind("http://", 0) == 0 || prefix.rfind("https://", 0) == 0) {
            // Icechunk's HTTP object store: no settings of its own.
            b.Map("store", [&] { b.Map("http", [] {}); });
        } else {
            throw Error("container '" + prefix +
                        "': only file://, s3:// and http(s):// containers can be declared");
        }
        b.String("url_prefix", prefix);
    });
}

std::vector<uint8_t> with_container(const std::vector<uint8_t>& config, const std::string& prefix) {
    flexbuffers::Builder b;
    const bool has = !config.empty();
    const auto root =
        has ? flexbuffers::GetRoot(config.data(), config.size()) : flexbuffers::Reference();
    const size_t s = b.StartMap();
    bool done = false;
    if (has && root.IsMap()) {
        const auto keys = root.AsMap().Keys();
        const auto values = root.AsMap().Values();
        for (size_t i = 0; i < keys.size(); ++i) {
            const std::string k = keys[i].AsKey();
            if (k != "virtual_chunk_containers") {
                copy_value(b, k.c_str(), values[i]);
                continue;
            }
            done = true;
            const size_t c = b.StartMap(k.c_str());
            if (values[i].IsMap()) {
                const auto ck = values[i].AsMap().Keys();
                const auto cv = values[i].AsMap().Values();
                for (size_t j = 0; j < ck.size(); ++j)
                    if (std::string(ck[j].AsKey()) != prefix) copy_value(b, ck[j].AsKey(), cv[j]);
            }
            write_container(b, prefix);
            b.EndMap(c);
        }
    }
    if (!done) b.Map("virtual_chunk_containers", [&] { write_container(b, prefix); });
    b.EndMap(s);
    b.Finish();
    return b.GetBuffer();
}

} // namespace

void declare_virtual_container(Store& storage, const std::string& url_prefix) {
    update_repo(storage, [&](generated::RepoT& repo) {
        require_online(repo, join_key(storage.uri(), "repo"), "a configuration change");
        repo.config = with_container(repo.config, url_prefix);
        generated::UpdateTypeUnion u;
        u.Set(generated::ConfigChangedUpdateT());
        push_update(repo, std::move(u));
    });
}

std::vector<std::string> declared_virtual_containers(Store& storage) {
    return Repository::open(std::shared_ptr<Store>(&storage, [](Store*) {}))
        ->virtual_chunk_containers();
}

} // namespace zarr3::icechunk
