// `gdal driver zarr3 VERB` (GDAL >= 3.12): each verb of the zarr3 tool
// (cli/zarr3_cli.hpp) as a GDAL driver algorithm. The algorithm only declares
// the verb's arguments for GDAL and turns them back into the tool's command
// line: the work is done by zarr3cli::run, the `zarr3` program's own code, and
// for `virtualize` by zarr3virt::run (cli/virtualize/, libhdf5: linked into
// the plugin on GDAL >= 3.12 only, see CMakeLists.txt), remote files read
// through GDAL (virtualize_gdal_reader.cpp).
#include "zarr3_algorithms.hpp"

#include "gdal_compat.hpp"

#if ZARR3_HAVE_DRIVER_ALGORITHMS

#include "virtualize_gdal_reader.hpp"
#include "zarr3_cli.hpp"
#include "zarr3_virtualize.hpp"

#include <gdalalgorithm.h>

#include <deque>
#include <iterator>
#include <memory>
#include <sstream>

namespace zarr3drv {
namespace {

constexpr const char* kHelpUrl = "README.md of gdal-zarr3 (the zarr3 tool)";

// The tool's messages for GDAL: without their "zarr3: " prefix (GDAL names
// the algorithm) and the trailing newline.
std::string AsGdalMessage(const std::string& text) {
    std::string out, line;
    std::istringstream in(text);
    while (std::getline(in, line)) {
        if (line.rfind("zarr3: ", 0) == 0) line.erase(0, 7);
        out += (out.empty() ? "" : "\n") + line;
    }
    return out;
}

// What every verb's algorithm does with the tool's result: its report as the
// output string, its problems as GDAL errors (a warning when it succeeded).
class ToolAlgorithm : public GDALAlgorithm {
  protected:
    using GDALAlgorithm::GDALAlgorithm;

    bool Finish(int rc, const std::ostringstream& out, const std::ostringstream& err) {
        output_ = out.str();
        std::string problems = AsGdalMessage(err.str());
        // A usage error (exit 2) carries the program's usage text: GDAL prints its own.
        if (rc == 2) problems = problems.substr(0, problems.find('\n'));
        if (!problems.empty())
            ReportError(rc == 0 ? CE_Warning : CE_Failure, CPLE_AppDefined, "%s", problems.c_str());
        return rc == 0;
    }

    std::string output_;
};

class VerbAlgorithm final : public ToolAlgorithm {
  public:
    explicit VerbAlgorithm(const zarr3cli::Verb& verb)
        : ToolAlgorithm(verb.name, verb.summary, kHelpUrl), verb_(verb) {
        AddArg("store", 0, verb.path_help, &path_).SetPositional().SetRequired();
        for (const auto& p : verb.positionals) {
            auto& arg = AddArg(p.name, 0, p.help, &positionals_.emplace_back()).SetPositional();
            if (p.required) arg.SetRequired();
        }
        for (const auto& o : verb.options) {
            auto& arg = AddArg(o.name, 0, o.help, &values_.emplace_back());
            if (o.required) arg.SetRequired();
        }
        AddOutputStringArg(&output_);
    }

  protected:
    bool RunImpl(GDALProgressFunc, void*) override {
        std::vector<std::string> args{verb_.name, path_};
        for (const auto& p : positionals_)
            if (!p.empty()) args.push_back(p);
        for (size_t i = 0; i < verb_.options.size(); ++i) {
            if (values_[i].empty()) continue;
            args.push_back(std::string("--") + verb_.options[i].name);
            args.push_back(values_[i]);
        }
        std::ostringstream out, err;
        const int rc = zarr3cli::run(args, out, err);
        return Finish(rc, out, err);
    }

  private:
    const zarr3cli::Verb& verb_;
    std::string path_;
    std::deque<std::string> positionals_; // stable addresses for AddArg
    std::deque<std::string> values_;
};

// `gdal driver zarr3 virtualize REPO FILE... --concat-dim DIM ...`: the
// arguments of `zarr3 virtualize` (a list of files, flags, and --relocate
// given twice: GDAL takes one value per option).
class VirtualizeAlgorithm final : public ToolAlgorithm {
  public:
    VirtualizeAlgorithm()
        : ToolAlgorithm("virtualize",
                        "Icechunk repository referencing the chunks of NetCDF-4 files in place",
                        kHelpUrl) {
        AddArg("repository", 0, "Icechunk repository to create (or add to, with --append)", &repo_)
            .SetPositional()
            .SetRequired();
        AddArg("input", 0,
               "NetCDF-4 files (local, /vsis3/ or /vsicurl/), in the order of the dimension",
               &files_)
            .SetPositional();
        AddArg("concat-dim", 0, "dimension the files are concatenated along", &text_[0]);
        AddArg("variables", 0, "data variables, comma-separated (default: all)", &text_[1]);
        AddArg("branch", 0, "branch (default main)", &text_[2]);
        AddArg("message", 0, "commit message", &text_[3]);
        AddArg("container", 0, "URL prefix the references name", &text_[4]);
        AddArg("append", 0, "add the files to the repository as one commit", &append_);
        AddArg("no-checksum", 0, "references record no modification time", &no_checksum_);
        AddArg("relocate", 0, "OLD_PREFIX then NEW_PREFIX (--relocate OLD --relocate NEW)",
               &relocate_)
            .SetMinCount(2)
            .SetMaxCount(2)
            .SetPackedValuesAllowed(false);
        AddOutputStringArg(&output_);
    }

  protected:
    bool RunImpl(GDALProgressFunc, void*) override {
        static constexpr const char* kNames[] = {"concat-dim", "variables", "branch", "message",
                                                 "container"};
        std::vector<std::string> args{repo_};
        args.insert(args.end(), files_.begin(), files_.end());
        for (size_t i = 0; i < std::size(kNames); ++i)
            if (!text_[i].empty())
                args.insert(args.end(), {std::string("--") + kNames[i], text_[i]});
        if (append_) args.emplace_back("--append");
        if (no_checksum_) args.emplace_back("--no-checksum");
        if (!relocate_.empty()) {
            args.emplace_back("--relocate");
            args.insert(args.end(), relocate_.begin(), relocate_.end());
        }
        std::ostringstream out, err;
        // Remote files (/vsis3/, /vsicurl/) through GDAL's raw block information.
        const int rc = zarr3virt::run(args, out, err, GdalRemoteNcReader());
        return Finish(rc, out, err);
    }

  private:
    std::string repo_;
    std::vector<std::string> files_, relocate_;
    std::string text_[5];
    bool append_ = false, no_checksum_ = false;
};

GDALAlgorithm* Instantiate(const std::vector<std::string>& path) {
    if (path.size() != 1) return nullptr;
    if (path[0] == "virtualize") return std::make_unique<VirtualizeAlgorithm>().release();
    for (const auto& v : zarr3cli::verbs())
        if (path[0] == v.name) return std::make_unique<VerbAlgorithm>(v).release();
    return nullptr;
}

} // namespace

void RegisterAlgorithms(GDALDriver* drv) {
    for (const auto& v : zarr3cli::verbs())
        drv->DeclareAlgorithm({v.name});
    drv->DeclareAlgorithm({"virtualize"});
    drv->pfnInstantiateAlgorithm = Instantiate;
}

} // namespace zarr3drv

#else

namespace zarr3drv {
void RegisterAlgorithms(GDALDriver*) {}
} // namespace zarr3drv

#endif
