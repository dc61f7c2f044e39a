// `gdal driver zarr3 VERB` (GDAL >= 3.12): each verb of the zarr3 tool
// (cli/zarr3_cli.hpp) as a GDAL driver algorithm. The algorithm only declares
// the verb's arguments for GDAL and turns them back into the tool's command
// line: the work is done by zarr3cli::run, the `zarr3` program's own code.
#include "zarr3_algorithms.hpp"

#include "gdal_compat.hpp"

#if ZARR3_HAVE_DRIVER_ALGORITHMS

#include "zarr3_cli.hpp"

#include <gdalalgorithm.h>

#include <deque>
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

class VerbAlgorithm final : public GDALAlgorithm {
  public:
    explicit VerbAlgorithm(const zarr3cli::Verb& verb)
        : GDALAlgorithm(verb.name, verb.summary, kHelpUrl), verb_(verb) {
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
        output_ = out.str();
        std::string problems = AsGdalMessage(err.str());
        // A usage error (exit 2) carries the program's usage text: GDAL prints its own.
        if (rc == 2) problems = problems.substr(0, problems.find('\n'));
        if (!problems.empty())
            ReportError(rc == 0 ? CE_Warning : CE_Failure, CPLE_AppDefined, "%s", problems.c_str());
        return rc == 0;
    }

  private:
    const zarr3cli::Verb& verb_;
    std::string path_;
    std::deque<std::string> positionals_; // stable addresses for AddArg
    std::deque<std::string> values_;
    std::string output_;
};

GDALAlgorithm* Instantiate(const std::vector<std::string>& path) {
    if (path.size() != 1) return nullptr;
    for (const auto& v : zarr3cli::verbs())
        if (path[0] == v.name) return std::make_unique<VerbAlgorithm>(v).release();
    return nullptr;
}

} // namespace

void RegisterAlgorithms(GDALDriver* drv) {
    for (const auto& v : zarr3cli::verbs())
        drv->DeclareAlgorithm({v.name});
    drv->pfnInstantiateAlgorithm = Instantiate;
}

} // namespace zarr3drv

#else

namespace zarr3drv {
void RegisterAlgorithms(GDALDriver*) {}
} // namespace zarr3drv

#endif
