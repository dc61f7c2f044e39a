# shellcheck shell=bash
# Icechunk interop fixtures (issue 29): repositories written by the real Icechunk (npm
# @earthmover/icechunk 2.2.x, pinned in scripts/icechunk/package-lock.json) inside the Debian 13
# chroot, whose glibc (>= 2.38) the binding's Linux binary needs.  Sourced by scripts/interop.sh after
# scripts/compat/chroot_lib.sh; defines functions only.
#
# icechunk_fixtures ROOT REPO OUT
#   ROOT  a prepared, mounted chroot (chroot_prepare) where OUT is bind-mounted at the same path
#   REPO  this repository (readable in the chroot at the same path)
#   OUT   an empty folder: receives OUT/node (the npm package, installed on the host by `npm ci`:
#         the binary is only downloaded there, never run) and OUT/fixtures (make_netcdf.py then
#         write_fixtures.mjs, both run in the chroot; OUT/fixtures/fixtures.json lists them).
# Nothing is cached across runs: the caller deletes OUT.

ICECHUNK_CHROOT_PACKAGES=(nodejs python3-h5py python3-netcdf4)

icechunk_fixtures() {
  local root=$1 repo=$2 out=$3
  local src=$repo/scripts/icechunk node=$out/node fx=$out/fixtures
  mkdir -p "$node" "$fx"
  step icechunk-apt _to_log "$root/tmp/icechunk-apt.log" \
    in_chroot "$root" apt-get install -y -q "${ICECHUNK_CHROOT_PACKAGES[@]}" ||
    { tail -n 20 "$root/tmp/icechunk-apt.log" >&2; return 1; }
  cp "$src/package.json" "$src/package-lock.json" "$src"/*.mjs "$node/"
  step icechunk-npm-ci _to_log "$out/npm.log" npm ci --prefix "$node" --no-audit --no-fund ||
    { cat "$out/npm.log" >&2; return 1; }
  step icechunk-netcdf in_chroot "$root" python3 "$src/make_netcdf.py" "$fx" >&2 || return 1
  step icechunk-write in_chroot "$root" node "$node/write_fixtures.mjs" "$fx" >&2 || return 1
}

# _icechunk_changes_written ROOT NODE OUT TESTS NAME SUITE
#   gtest SUITE.Write writes OUT/NAME, the real Icechunk changes it (NAME_written.mjs, in the
#   chroot; its report in OUT/NAME.json), gtest SUITE.Check reads the result. The gtests find both
#   in ZARR3_ICECHUNK_<NAME>_OUT and ZARR3_ICECHUNK_<NAME>_CHECK.
_icechunk_changes_written() {
  local root=$1 node=$2 out=$3 tests=$4 name=$5 suite=$6
  local var=ZARR3_ICECHUNK_${name^^}
  step "icechunk-$name-write" env "${var}_OUT=$out/$name" "$tests" --gtest_brief=1 \
    --gtest_filter="$suite.Write" >&2 || return 1
  step "icechunk-$name-by-icechunk" in_chroot "$root" node "$node/${name}_written.mjs" "$out/$name" \
    >"$out/$name.json" || return 1
  step "icechunk-$name-check" env "${var}_OUT=$out/$name" "${var}_CHECK=$out/$name.json" "$tests" \
    --gtest_brief=1 --gtest_filter="$suite.Check" >&2
}

# icechunk_check_written ROOT REPO OUT NODE BUILD
#   What this plugin writes, read by the real Icechunk (issue 30):
#   1. the core writer: gtest IcechunkWrite.InteropWrite writes OUT/repo, check_written.mjs reads it
#      and commits on top, IcechunkWrite.InteropCheck compares and reads that commit;
#   2. the zarr3 tools: tools_repo.sh (compactions as commits, tags, branches on a copy of
#      data/t2m_2023q1.icechunk) writes OUT/tools, check_tools.mjs reads every branch, tag and
#      snapshot and commits on top, IcechunkWrite.ToolsInteropCheck compares and reads that commit;
#      expire_repo.sh: the same sample compacted, then zarr3 expire + gc; check_tools.mjs reads it,
#      IcechunkMaintenance.InteropCheck compares with the copy taken before (issue 43);
#   3. an array written by the core writer (IcechunkMoveInterop.Write), moved by Icechunk
#      (move_written.mjs), then changed by sessions opened before the move: a conflict naming the
#      node (IcechunkMoveInterop.Check);
#   4. zarr3 virtualize: virtual_repo.sh writes OUT/virtual (4 NetCDF-4 files, then a 5th with
#      --append), check_virtual.mjs dumps every key of each snapshot as Icechunk reads it into
#      OUT/virtual/read/<id>/ (test_icechunk_interop.py::test_virtualize_* compares them with the
#      netCDF driver), and the tip of the committed data/archive.icechunk (relocated onto copies of
#      its files) into OUT/virtual/sample_read/<id>/;
#   5. the fault tests (IcechunkFaults.*: a full disk at each step of a commit, two writers and a
#      reader) leave their repositories in OUT/faults; check_open.mjs opens them with Icechunk, checks
#      the branches and reads every snapshot of main.
#   ROOT: a prepared chroot where OUT is mounted at the same path; NODE: a folder holding the
#   installed npm package (node_modules; icechunk_fixtures' OUT/node); BUILD: holds zarr3_tests and
#   zarr3. Step times are printed by print_step_times.
icechunk_check_written() {
  local root=$1 repo=$2 out=$3 node=$4 build=$5
  local src=$repo/scripts/icechunk tests=$build/zarr3_tests
  cp "$src/check_written.mjs" "$src/check_tools.mjs" "$src/check_open.mjs" \
    "$src/append_written.mjs" "$src/move_written.mjs" "$src/repo_dump.mjs" "$src/check_virtual.mjs" \
    "$node/"
  mkdir -p "$out"
  ZARR3_ICECHUNK_WRITE_OUT=$out/repo step icechunk-core-write "$tests" --gtest_brief=1 \
    --gtest_filter=IcechunkWrite.InteropWrite >&2 || return 1
  step icechunk-core-read in_chroot "$root" node "$node/check_written.mjs" "$out/repo" \
    >"$out/report.json" || return 1
  ZARR3_ICECHUNK_WRITE_OUT=$out/repo ZARR3_ICECHUNK_CHECK=$out/report.json \
    step icechunk-core-check "$tests" --gtest_brief=1 --gtest_filter=IcechunkWrite.InteropCheck >&2 ||
    return 1
  step icechunk-tools-write _to_log "$out/tools.log" bash "$src/tools_repo.sh" "$build/zarr3" \
    "$repo/data/t2m_2023q1.icechunk" "$out/tools" || { cat "$out/tools.log" >&2; return 1; }
  step icechunk-tools-read in_chroot "$root" node "$node/check_tools.mjs" "$out/tools" \
    >"$out/tools.json" || return 1
  ZARR3_ICECHUNK_TOOLS_REPO=$out/tools ZARR3_ICECHUNK_TOOLS_CHECK=$out/tools.json \
    step icechunk-tools-check "$tests" --gtest_brief=1 \
    --gtest_filter=IcechunkWrite.ToolsInteropCheck >&2 || return 1
  # A repository the zarr3 tools expired and collected (expire, gc), read by Icechunk, which commits
  # on top; every branch and tag as before (issue 43).
  step icechunk-expire-write _to_log "$out/expire.log" bash "$src/expire_repo.sh" "$build/zarr3" \
    "$repo/data/t2m_2023q1.icechunk" "$out/expire" || { cat "$out/expire.log" >&2; return 1; }
  step icechunk-expire-read in_chroot "$root" node "$node/check_tools.mjs" "$out/expire" \
    >"$out/expire.json" || return 1
  ZARR3_ICECHUNK_EXPIRE_REPO=$out/expire ZARR3_ICECHUNK_EXPIRE_CHECK=$out/expire.json \
    step icechunk-expire-check "$tests" --gtest_brief=1 \
    --gtest_filter=IcechunkMaintenance.InteropCheck >&2 || return 1
  # An array appended to by this library (rectilinear, every chunk_shapes axis a list), appended
  # to by Icechunk, read back (issue 40.5).
  _icechunk_changes_written "$root" "$node" "$out" "$tests" append IcechunkAppendInterop || return 1
  # An array this library wrote, moved by Icechunk (moveNode), then changed by a session opened
  # before the move: a conflict naming the node, nothing committed (issue 39.5).
  _icechunk_changes_written "$root" "$node" "$out" "$tests" move IcechunkMoveInterop || return 1
  # A repository zarr3 virtualize wrote (4 NetCDF-4 files, then a 5th with --append), every key of
  # each snapshot read by Icechunk into a plain store for test_icechunk_interop.py (issue 42).
  step icechunk-virtual-write _to_log "$out/virtual.log" bash "$src/virtual_repo.sh" "$build/zarr3" \
    "$out/virtual" || { cat "$out/virtual.log" >&2; return 1; }
  step icechunk-virtual-read in_chroot "$root" node "$node/check_virtual.mjs" "$out/virtual/repo.icechunk" \
    "file://$out/virtual/nc/" "$out/virtual/read" >"$out/virtual/read.json" || return 1
  # The committed sample data/archive.icechunk (zarr3 virtualize), relocated onto copies of its files.
  step icechunk-sample-read in_chroot "$root" node "$node/check_virtual.mjs" "$out/virtual/sample.icechunk" \
    "file://$out/virtual/sample_nc/" "$out/virtual/sample_read" tip >"$out/virtual/sample_read.json" || return 1
  ZARR3_ICECHUNK_FAULTS_OUT=$out/faults step icechunk-faults-write "$tests" --gtest_brief=1 \
    --gtest_filter='IcechunkFaults.*' >&2 || return 1
  step icechunk-faults-open in_chroot "$root" node "$node/check_open.mjs" "$out/faults" >&2 || return 1
}
