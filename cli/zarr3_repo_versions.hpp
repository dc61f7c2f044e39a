// The versions of an Icechunk repository `zarr3 info` and `zarr3 verify`
// read (zarr3_repo_versions.cpp).
#pragma once

#include "zarr3/store.hpp"

#include <memory>
#include <string>
#include <vector>

// A version of a repository: "branch main (snapshot ID)" and its read-only store.
struct RepoVersion {
    std::string label;
    std::shared_ptr<zarr3::Store> store;
};

// Whether the local folder `path` is an Icechunk repository (no zarr.json;
// a repo file, or refs/ of spec 1).
bool is_repository(const std::string& path);

// The versions `zarr3 VERB REPO [--branch NAME | --tag NAME]` reads: the one
// named, or every branch tip (sorted by name). Error for other options.
std::vector<RepoVersion> repository_versions(const std::string& path,
                                             const std::vector<std::string>& opts,
                                             const std::string& verb);
