// Registration, Identify, Open and precedence over GDAL's built-in Zarr driver.
#include "zarr3_driver.hpp"
#include "error_boundary.hpp"

#include "classic/raster_append.hpp"
#include "classic/raster_dataset.hpp"
#include "options/driver_options.hpp"
#include "storage/consolidation.hpp"
#include "storage/icechunk_commit.hpp"
#include "storage/icechunk_create.hpp"
#include "storage/icechunk_open.hpp"
#include "storage/store_replace.hpp"
#include "storage/unfinished_copy.hpp"
#include "storage/vsi_store.hpp"
#include "zarr3/metadata.hpp"
#include "zarr3_algorithms.hpp"

#include "cpl_conv.h"
#include "cpl_string.h"
#include "cpl_vsi.h"

#include <algorithm>
#include <cstring>
#include <set>

#ifndef ZARR3_VERSION
#define ZARR3_VERSION "unknown"
#endif

namespace zarr3drv {

namespace {

constexpr const char* kPrefix = "ZARR3:";

bool EndsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsNetworkPath(const std::string& s) {
    for (const char* p : {"/vsicurl", "/vsis3", "/vsigs", "/vsiaz", "/vsiadls", "/vsioss",
                          "/vsiswift", "/vsiwebhdfs", "/vsihdfs"})
        if (STARTS_WITH(s.c_str(), p)) return true;
    return false;
}

bool StatOK(const std::string& path) {
    VSIStatBufL st;
    return VSIStatExL(path.c_str(), &st, VSI_STAT_EXISTS_FLAG) == 0;
}

// Folder or URL of a plain (unprefixed) name: "x.zarr/", "x.zarr/zarr.json" -> "x.zarr".
std::string RootOf(std::string s) {
    if (s == "zarr.json") return ".";
    if (EndsWith(s, "/zarr.json")) s.resize(s.size() - std::strlen("/zarr.json"));
    while (s.size() > 1 && s.back() == '/')
        s.pop_back();
    return s;
}

std::string NormaliseNodePath(std::string p) {
    while (!p.empty() && p.front() == '/')
        p.erase(p.begin());
    while (!p.empty() && p.back() == '/')
        p.pop_back();
    return p;
}

enum class RootKind { NotOurs, ZarrV3, Broken };

// Checks that zarr.json text is JSON and reads its top-level zarr_format
// without building a DOM (the document is parsed for real when the node is
// opened; a root array may list a million chunk edges).
class RootScan final : public nlohmann::json_sax<nlohmann::json> {
  public:
    bool top_is_object = false;
    bool zarr_format_3 = false; // the last top-level "zarr_format" is the integer 3

    bool null() override { return value(false); }
    bool boolean(bool) override { return value(false); }
    bool number_integer(number_integer_t v) override { return value(v == 3); }
    bool number_unsigned(number_unsigned_t v) override { return value(v == 3); }
    bool number_float(number_float_t, const string_t&) override { return value(false); }
    bool string(string_t&) override { return value(false); }
    bool binary(binary_t&) override { return value(false); }
    bool start_object(std::size_t) override {
        if (depth_ == 0) top_is_object = true;
        return open();
    }
    bool start_array(std::size_t) override { return open(); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override {
        pending_ = depth_ == 1 && k == "zarr_format";
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }

  private:
    bool value(bool is_3) {
        if (pending_) zarr_format_3 = is_3;
        pending_ = false;
        return true;
    }
    bool open() {
        if (pending_) zarr_format_3 = false; // an object or a list
        pending_ = false;
        return ++depth_ <= 512; // deeper: parse_json_text reports it
    }
    bool close() {
        --depth_;
        return true;
    }
    size_t depth_ = 0;
    bool pending_ = false;
};

// Reads the root zarr.json of an unprefixed name and decides whether the
// store is ours. Declines silently (no CPLError) when it is not Zarr v3 so
// that later drivers get their turn; a zarr.json that is not JSON at all is
// reported, naming the file. One read: the store keeps the document for the
// dataset that opens next (remote: one GET, no HEAD).
RootKind ClassifyRoot(VSIStore& store) {
    const std::string where = store.uri() + "/zarr.json";
    std::optional<zarr3::Bytes> bytes;
    {
        CPLErrorStateBackuper keep_state;
        CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
        try {
            bytes = store.get_bounded("zarr.json", zarr3::kMaxMetadataBytes);
            if (!bytes) return RootKind::NotOurs;
        } catch (const zarr3::FormatError&) {
            bytes.reset(); // larger than the limit
        } catch (const std::exception&) {
            return RootKind::NotOurs;
        }
    }
    if (!bytes) {
        CPLError(CE_Failure, CPLE_AppDefined, "%s: larger than the %llu-byte metadata limit",
                 where.c_str(), static_cast<unsigned long long>(zarr3::kMaxMetadataBytes));
        return RootKind::Broken;
    }
    const std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
    RootScan scan;
    if (!nlohmann::json::sax_parse(text.begin(), text.end(), &scan)) {
        // Not JSON (or nested too deep): parse_json_text names the byte and the problem.
        ErrorBoundary(where, [&] {
            zarr3::parse_json_text(text, where);
            throw zarr3::FormatError(where + ": invalid JSON");
        });
        return RootKind::Broken;
    }
    if (!scan.top_is_object) {
        CPLError(CE_Failure, CPLE_AppDefined, "%s: expected a JSON object at the top level",
                 where.c_str());
        return RootKind::Broken;
    }
    if (!scan.zarr_format_3)
        return RootKind::NotOurs; // v2 has no zarr.json; the v3 draft has a URL string here
    return RootKind::ZarrV3;
}

int Identify(GDALOpenInfo* oi) {
    const std::string f = oi->pszFilename;
    if (STARTS_WITH_CI(f.c_str(), kPrefix) || STARTS_WITH_CI(f.c_str(), "ICECHUNK:")) return TRUE;
    if (f == "zarr.json" || EndsWith(f, "/zarr.json")) return oi->bStatOK && !oi->bIsDirectory;
    // Remote folders (object stores and HTTP servers often cannot even stat
    // one): Open decides with one GET of zarr.json; a stat here would cost a
    // HEAD more.
    if (IsNetworkPath(f) && oi->fpL == nullptr) return GDAL_IDENTIFY_UNKNOWN;
    // A folder without zarr.json may be what a killed copy left (the
    // unfinished mark, or nothing but Zarr store content): recognised so
    // that Delete (gdalmanage delete) removes it; it does not open.
    // An Icechunk repository is recognised by its `repo` file (spec 2) or its
    // refs/ and config.yaml (spec 1).
    if (oi->bIsDirectory)
        return StatOK(RootOf(f) + "/zarr.json") || LooksLikeIcechunkRepo(RootOf(f)) ||
               LooksLikeIncompleteStore(RootOf(f));
    // GDAL 3.6 cannot stat implicit /vsimem/ folders.
    if (STARTS_WITH(f.c_str(), "/vsimem/") && oi->fpL == nullptr)
        return StatOK(RootOf(f) + "/zarr.json") || LooksLikeIcechunkRepo(RootOf(f)) ||
               LooksLikeIncompleteStore(RootOf(f));
    // A local store whose replacement was killed between its two renames: the
    // name is missing and the old store is aside; Open puts it back (GDAL >= 3.9
    // calls Open only for what Identify accepts).
    if (!oi->bStatOK && !STARTS_WITH(f.c_str(), "/vsi") &&
        StatOK(AsideName(RootOf(f)) + "/zarr.json"))
        return TRUE;
    return FALSE;
}

// An unprefixed folder that Identify took for an incomplete store: an error
// naming the fix (the copy did not finish), not "not recognized".
bool ReportIncomplete(const std::string& root) {
    if (StatOK(root + "/zarr.json") || !LooksLikeIncompleteStore(root)) return false;
    CPLError(CE_Failure, CPLE_OpenFailed,
             "%s: an incomplete Zarr store (no zarr.json: a copy into it did not finish); "
             "re-run the copy, or remove it with gdalmanage delete %s",
             root.c_str(), root.c_str());
    return true;
}

// The store both opens (classic and multidimensional) use, decided and built
// once: the root's VSI store (writable for update), kept consolidating on
// update when the root carries consolidated metadata.
std::shared_ptr<zarr3::Store> StoreToOpen(std::shared_ptr<VSIStore> store, bool update) {
    if (!update) return store;
    return ConsolidatingIfPresent(std::move(store));
}

// The classic or multidimensional dataset over `store`; nullptr after a CPLError.
GDALDataset* OpenDataset(GDALOpenInfo* oi, std::shared_ptr<zarr3::Store> store,
                         const OpenTarget& t) {
    try {
        if (oi->nOpenFlags & GDAL_OF_MULTIDIM_RASTER) return Zarr3OpenMultidim(oi, store, t);
        return Zarr3OpenClassic(oi, store, t);
    } catch (const std::exception& e) {
        CPLError(CE_Failure, CPLE_AppDefined, "%s: %s", t.root.c_str(), e.what());
        return nullptr;
    }
}

// The Icechunk repository at t.root, at the version chosen, read-only.
// `repo_file`: root/repo's bytes when ProbeIcechunkRepo has just read them.
GDALDataset* OpenIcechunk(GDALOpenInfo* oi, const OpenTarget& t, const IcechunkVersion& v,
                          std::optional<std::vector<unsigned char>> repo_file = std::nullopt) {
    if (oi->eAccess == GA_Update) { // update = a commit on a branch when the dataset closes
        std::shared_ptr<CommittingStore> session;
        if (!ErrorBoundary(t.root, [&] {
                session = OpenRepositoryForUpdate(
                    t.root, v, CSLFetchNameValue(oi->papszOpenOptions, "COMMIT_MESSAGE"));
            }))
            return nullptr;
        return OpenDataset(oi, session, t);
    }
    std::shared_ptr<zarr3::icechunk::IcechunkStore> store;
    if (!ErrorBoundary(t.root, [&] {
            store = OpenIcechunkStore(t.root, v, oi->papszOpenOptions, std::move(repo_file));
        }))
        return nullptr;
    OpenTarget pinned = t;
    if (v.any()) pinned.version_query = "snapshot=" + store->snapshot().id;
    GDALDataset* ds = OpenDataset(oi, store, pinned);
    if (ds) ShowIcechunkVersion(*ds, *store, v);
    return ds;
}

// What the name and the open options say to open; false after a CPLError.
bool ResolveTarget(GDALOpenInfo* oi, OpenTarget& t, IcechunkVersion& version, bool& icechunk) {
    bool ok = true;
    std::string error;
    const auto ice = ParseIcechunkName(oi->pszFilename, ok, error);
    icechunk = ice.has_value();
    if (ice && ok) {
        t.root = ice->repo;
        t.prefixed = true;
        t.array_path = ice->node;
        t.has_array = ice->has_node;
        version = ice->version;
    } else if (!ice && !ParseOpenTarget(oi->pszFilename, t)) {
        return false;
    }
    if (ok) ok = ApplyVersionOptions(oi->papszOpenOptions, version, error);
    if (!ok) {
        CPLError(CE_Failure, CPLE_OpenFailed, "%s: %s", oi->pszFilename, error.c_str());
        return false;
    }
    if (!t.has_array) {
        const char* arr = CSLFetchNameValue(oi->papszOpenOptions, "ARRAY");
        if (arr && arr[0]) {
            t.array_path = NormaliseNodePath(arr);
            t.has_array = true;
        }
    }
    return true;
}

GDALDataset* Open(GDALOpenInfo* oi) {
    // A replacement interrupted between its two renames (a file system
    // without RENAME_EXCHANGE): the old store is put back (store_replace.hpp).
    if (!oi->bStatOK && !STARTS_WITH(oi->pszFilename, "/vsi") &&
        RecoverInterruptedSwap(RootOf(oi->pszFilename))) {
        GDALOpenInfo again(oi->pszFilename, oi->nOpenFlags);
        again.papszOpenOptions = oi->papszOpenOptions;
        again.papszAllowedDrivers = oi->papszAllowedDrivers;
        return Open(&again);
    }
    if (!Identify(oi)) return nullptr;
    OpenTarget t;
    IcechunkVersion version;
    bool icechunk = false;
    if (!ResolveTarget(oi, t, version, icechunk)) return nullptr;
    if (!t.prefixed && !CPLTestBool(CPLGetConfigOption("ZARR3_PRECEDENCE", "YES")))
        return nullptr; // leave the store to GDAL's built-in Zarr driver
    if (icechunk) return OpenIcechunk(oi, t, version);
    // Update access: classic (raster_dataset.cpp) and multidim (md_dataset.cpp).
    const bool writable = oi->eAccess == GA_Update;
    std::shared_ptr<VSIStore> store;
    if (!ErrorBoundary(t.root, [&] { store = std::make_shared<VSIStore>(t.root, writable); }))
        return nullptr;
    if (!t.prefixed) {
        const RootKind kind = ClassifyRoot(*store);
        if (kind == RootKind::NotOurs) {
            IcechunkProbe probe = ProbeIcechunkRepo(t.root);
            if (probe.is_repo) return OpenIcechunk(oi, t, version, std::move(probe.repo_file));
            ReportIncomplete(t.root);
        }
        if (kind != RootKind::ZarrV3) return nullptr;
    } else {
        const std::string where = store->uri() + "/zarr.json";
        PrefixedRoot found;
        if (!ErrorBoundary(where, [&] { found = ReadPrefixedRoot(*store, t.root); }))
            return nullptr;
        const auto& root_json = found.root_json;
        if (!root_json) {
            IcechunkProbe probe = found.probe ? std::move(*found.probe)
                                              : ProbeIcechunkRepo(t.root, found.repo_absent);
            if (probe.is_repo) return OpenIcechunk(oi, t, version, std::move(probe.repo_file));
        }
        if (!root_json) {
            CPLError(CE_Failure, CPLE_OpenFailed, "%s: not found (no Zarr v3 store at %s)",
                     where.c_str(), t.root.c_str());
            return nullptr;
        }
    }
    if (version.any()) {
        CPLError(CE_Failure, CPLE_OpenFailed,
                 "%s: BRANCH, TAG, SNAPSHOT and AS_OF choose a version of an Icechunk "
                 "repository; this is a plain Zarr store, with one version",
                 t.root.c_str());
        return nullptr;
    }
    return OpenDataset(oi, StoreToOpen(store, writable), t);
}

// The folder a new store is created in: an incomplete store a killed copy
// left there is removed first; an existing store or other content is refused
// with an error naming the fix (GDAL's QuietDelete leaves folders alone).
bool TargetReady(const char* name) {
    const std::string f = name ? name : "";
    if (f.empty() || STARTS_WITH_CI(f.c_str(), kPrefix) || IsNetworkPath(f)) return true;
    return PrepareTarget(RootOf(f));
}

// Multidimensional sources (a root group, no bands) go to the hierarchy copy.
GDALDataset* CreateCopy(const char* name, GDALDataset* src, int strict, DriverOptionList options,
                        GDALProgressFunc progress, void* progress_data) {
    if (AppendsToRepository(name, options)) // one commit, retried when another writer won
        return IcechunkAppendCopy(name, src, options, progress, progress_data);
    if (WantsIcechunk(name, options)) // into a session, then one commit
        return IcechunkCreateCopy(name, src, strict, options, progress, progress_data);
    if (AppendsToExistingStore(name, options)) // -co APPEND_DIM: raster_append.cpp
        return Zarr3AppendCopy(name, src, options, progress, progress_data);
    if (!TargetReady(name)) return nullptr;
    if (src->GetRasterCount() == 0 && src->GetRootGroup())
        return Zarr3CreateCopyMultidim(name, src, strict, options, progress, progress_data);
    return Zarr3CreateCopy(name, src, strict, options, progress, progress_data);
}

GDALDataset* Create(const char* name, int xsize, int ysize, int bands, GDALDataType type,
                    DriverOptionList options) {
    if (WantsIcechunk(name, options)) // a session; closing the dataset commits
        return IcechunkCreate(name, xsize, ysize, bands, type, options);
    if (!TargetReady(name)) return nullptr;
    return Zarr3Create(name, xsize, ysize, bands, type, options);
}

GDALDataset* CreateMultidim(const char* name, CSLConstList root_group_options,
                            CSLConstList options) {
    if (WantsIcechunk(name, options)) return IcechunkCreateMultidim(name, options);
    if (!TargetReady(name)) return nullptr;
    return Zarr3CreateMultidim(name, root_group_options, options);
}

} // namespace

bool ParseOpenTarget(const char* filename, OpenTarget& out) {
    out = OpenTarget{};
    const std::string f = filename ? filename : "";
    if (!STARTS_WITH_CI(f.c_str(), kPrefix)) {
        out.root = RootOf(f);
        return !out.root.empty();
    }
    out.prefixed = true;
    const std::string rest = f.substr(std::strlen(kPrefix));
    std::string node;
    bool has_node = false;
    if (!rest.empty() && rest.front() == '"') {
        const size_t q = rest.find('"', 1);
        if (q == std::string::npos) {
            CPLError(CE_Failure, CPLE_OpenFailed,
                     "%s: missing closing quote; expected ZARR3:\"path\":/array", f.c_str());
            return false;
        }
        out.root = rest.substr(1, q - 1);
        const std::string after = rest.substr(q + 1);
        if (!after.empty()) {
            if (after.front() != ':') {
                CPLError(CE_Failure, CPLE_OpenFailed, "%s: expected ':' after the quoted path",
                         f.c_str());
                return false;
            }
            node = after.substr(1);
            has_node = true;
        }
    } else {
        // Unquoted: the path must not contain ':' (quote paths such as /vsicurl/http://...).
        const size_t c = rest.find(':');
        out.root = rest.substr(0, c);
        if (c != std::string::npos) {
            node = rest.substr(c + 1);
            has_node = true;
        }
    }
    out.root = RootOf(out.root);
    if (out.root.empty()) {
        CPLError(CE_Failure, CPLE_OpenFailed,
                 "%s: empty store path; expected ZARR3:\"path\":/array", f.c_str());
        return false;
    }
    out.array_path = NormaliseNodePath(node);
    out.has_array = has_node;
    return true;
}

std::string SubdatasetName(const std::string& root, const std::string& node_path,
                           const std::string& version_query) {
    if (!version_query.empty())
        return "ICECHUNK:\"" + root + "?" + version_query + "\":/" + NormaliseNodePath(node_path);
    return std::string(kPrefix) + "\"" + root + "\":/" + NormaliseNodePath(node_path);
}

} // namespace zarr3drv

extern "C" ZARR3_EXPORT void GDALRegister_Zarr3() {
    if (!GDAL_CHECK_VERSION("Zarr3")) return;
    if (GDALGetDriverByName("Zarr3") != nullptr) return;
    auto* drv = new GDALDriver();
    drv->SetDescription("Zarr3");
    drv->SetMetadataItem(GDAL_DMD_LONGNAME,
                         "Zarr v3 with rectilinear chunk grids and sharding (gdal-zarr3)");
    drv->SetMetadataItem(GDAL_DMD_HELPTOPIC, "README.md of gdal-zarr3");
    drv->SetMetadataItem(GDAL_DCAP_RASTER, "YES");
    drv->SetMetadataItem(GDAL_DCAP_MULTIDIM_RASTER, "YES");
    drv->SetMetadataItem(GDAL_DCAP_VIRTUALIO, "YES");
    drv->SetMetadataItem(GDAL_DCAP_CREATE, "YES");
    drv->SetMetadataItem(GDAL_DCAP_CREATECOPY, "YES");
    drv->SetMetadataItem(GDAL_DCAP_CREATE_MULTIDIMENSIONAL, "YES");
    // gdal_translate -co APPEND_SUBDATASET=YES (appends, -co APPEND_DIM) needs it from GDAL 3.11
    // on ("Subdataset creation not supported for driver"); the literal works with every version.
    drv->SetMetadataItem("DCAP_CREATE_SUBDATASETS", "YES");
    drv->SetMetadataItem(GDAL_DMD_SUBDATASETS, "YES");
    drv->SetMetadataItem(GDAL_DMD_EXTENSIONS, "zarr");
    drv->SetMetadataItem(GDAL_DMD_CONNECTION_PREFIX, "ZARR3:");
    drv->SetMetadataItem(
        GDAL_DMD_CREATIONDATATYPES,
        "Byte Int8 UInt16 Int16 UInt32 Int32 UInt64 Int64 Float32 Float64 CFloat32 CFloat64");
    drv->SetMetadataItem(GDAL_DMD_OPENOPTIONLIST, zarr3drv::kOpenOptionList);
    drv->SetMetadataItem(GDAL_DMD_CREATIONOPTIONLIST, zarr3drv::kCreationOptionList);
    drv->SetMetadataItem(GDAL_DMD_MULTIDIM_ARRAY_CREATIONOPTIONLIST,
                         zarr3drv::kArrayCreationOptionList);
    drv->SetMetadataItem(GDAL_DMD_MULTIDIM_DATASET_CREATIONOPTIONLIST,
                         zarr3drv::kMultidimDatasetCreationOptionList);
    drv->SetMetadataItem("ZARR3_VERSION", ZARR3_VERSION);
    drv->pfnIdentify = zarr3drv::Identify;
    drv->pfnOpen = zarr3drv::Open;
    drv->pfnCreate = zarr3drv::Create;         // classic raster (raster_create.cpp)
    drv->pfnCreateCopy = zarr3drv::CreateCopy; // gdal_translate / gdalmdimtranslate
    drv->pfnDelete = zarr3drv::DeleteStore;    // unfinished_copy.cpp
    drv->pfnCreateMultiDimensional = zarr3drv::CreateMultidim;
    zarr3drv::RegisterAlgorithms(drv); // `gdal driver zarr3 VERB` (zarr3_algorithms.cpp)

    auto* dm = GetGDALDriverManager();
    dm->RegisterDriver(drv);
    // GDAL's built-in Zarr driver claims every folder with a zarr.json. When
    // it is already registered, move it behind us; Zarr3::Open declines
    // silently for anything that is not Zarr v3, so it still gets v2 stores.
    if (GDALDriver* builtin = dm->GetDriverByName("Zarr")) {
        dm->DeregisterDriver(builtin);
        dm->RegisterDriver(builtin);
    }
}
