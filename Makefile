# gdal-zarr3: build, test and demo entry points.
#   make demo   install missing Debian packages, build, run the demo on data/
#   make test   install missing Debian packages, build, run ctest + pytest, print a SUMMARY line
SHELL := /bin/bash
BUILD_DIR ?= build
PYTHON ?= /usr/bin/python3
JOBS ?= 2
CMAKE_FLAGS ?=
ABS_BUILD_DIR = $(abspath $(BUILD_DIR))
# pytest workers (pytest-xdist: tests handed out one by one; those sharing /tmp/gdal-zarr3-archive, marked xdist_group, run in one worker); 1 = one process.
PYTEST_JOBS ?= 2
PYTEST_PAR = $(shell [ "$(PYTEST_JOBS)" -gt 1 ] 2>/dev/null && $(PYTHON) -c 'import xdist' 2>/dev/null && echo "-n $(PYTEST_JOBS) --dist loadgroup")

.PHONY: all deps deps-packages deps-demo configure configure-demo build test ctest pytest demo install package test-package sample test-compat test-compat-sid test-interop test-sanitize test-tsan fuzz bench bench-icechunk bench-append bench-pan bench-qgis-pan bench-virtualize bench-writers clean

all: build

deps:
	@ZARR3_BUILD_DIR=$(ABS_BUILD_DIR) bash scripts/install-deps.sh

deps-packages:
	@ZARR3_BUILD_DIR=$(ABS_BUILD_DIR) bash scripts/install-deps.sh --no-azurite

# Only what building the plugin and the tool and running the demo need (not the test suites').
deps-demo:
	@bash scripts/install-deps.sh --demo

# Unity build of the library, tool and plugin: about a third of the compiler time of a cold build.
configure:
	cmake -S . -B $(BUILD_DIR) -DZARR3_WERROR=ON -DZARR3_UNITY_BUILD=ON -DZARR3_BUILD_TESTS=ON $(CMAKE_FLAGS)

configure-demo:
	cmake -S . -B $(BUILD_DIR) -DZARR3_WERROR=ON -DZARR3_UNITY_BUILD=ON -DZARR3_BUILD_TESTS=OFF $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j$(JOBS)

# Runs both suites even when the first fails; the last line is the summary.
# Azurite's npm install (network bound, ~45 s) runs while the build compiles.
test: deps-packages
	@mkdir -p $(BUILD_DIR); \
	ZARR3_BUILD_DIR=$(ABS_BUILD_DIR) bash scripts/install-deps.sh --azurite-only >$(BUILD_DIR)/azurite-install.log 2>&1 </dev/null & az=$$!; \
	$(MAKE) --no-print-directory build; built=$$?; \
	wait $$az; cat $(BUILD_DIR)/azurite-install.log; \
	[ $$built -eq 0 ] || exit 1; \
	rc=0; \
	( cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS) ) 2>&1 | tee $(BUILD_DIR)/ctest.log; \
	  [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	ZARR3_BUILD_DIR=$(ABS_BUILD_DIR) GDAL_DRIVER_PATH=$(ABS_BUILD_DIR) $(PYTHON) -m pytest autotest -q -p no:cacheprovider --durations=25 $(PYTEST_PAR) 2>&1 | tee $(BUILD_DIR)/pytest.log; \
	  [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	ct=$$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' $(BUILD_DIR)/ctest.log | tail -1); \
	ct_total=$$(sed -nE 's/.*out of ([0-9]+).*/\1/p' <<<"$$ct"); ct_failed=$$(sed -nE 's/.*, ([0-9]+) tests? failed.*/\1/p' <<<"$$ct"); \
	ct_total=$${ct_total:-0}; ct_failed=$${ct_failed:-0}; \
	py=$$(grep -E '[0-9]+ (passed|failed|error|errors|skipped)' $(BUILD_DIR)/pytest.log | tail -1); \
	count() { grep -oE "[0-9]+ $$1" <<<"$$py" | grep -oE '[0-9]+' || echo 0; }; \
	py_failed=$$(( $$(count failed) + $$(count error) )); \
	echo "SUMMARY: ctest $$((ct_total - ct_failed)) passed, $$ct_failed failed; pytest $$(count passed) passed, $$py_failed failed, $$(count skipped) skipped"; \
	exit $$rc

# The demo needs the plugin and the tool only (the test suites and their packages are `make test`'s).
demo: deps-demo configure-demo
	cmake --build $(BUILD_DIR) -j$(JOBS) --target gdal_Zarr3 zarr3
	@bash scripts/demo.sh $(ABS_BUILD_DIR)

install: build
	cmake --install $(BUILD_DIR)

# Debian package of the plugin and the zarr3 tool: $(BUILD_DIR)/gdal-zarr3_<version>_<arch>.deb
# (installs into GDAL's plugin folder; apt install ./<file>.deb pulls its dependencies).
package: deps configure
	cmake --build $(BUILD_DIR) -j$(JOBS) --target gdal_Zarr3 zarr3
	cd $(BUILD_DIR) && cpack -G DEB

# Builds the package and installs it in a clean Debian 12 chroot, where a store must open.
test-package:
	bash scripts/test-package.sh

# Regenerates the committed demo sample (deterministic).
sample:
	$(PYTHON) scripts/make_sample.py

# Extra test legs (see the scripts for their requirements).
test-compat:
	bash scripts/compat.sh

# The same against Debian sid: GDAL 3.13 and GCC 16, with the two-way tests with GDAL's own driver.
test-compat-sid:
	COMPAT_SUITE=sid COMPAT_INTEROP=0 ZARR3_EXPECT_BUILTIN_V3=1 bash scripts/compat.sh

test-interop: build
	ZARR3_BUILD_DIR=$(ABS_BUILD_DIR) bash scripts/interop.sh

# ASan + UBSan build running ctest and pytest (scripts/sanitize.sh).
test-sanitize:
	bash scripts/sanitize.sh

# ThreadSanitizer run of the core's threaded tests (scripts/tsan.sh).
test-tsan:
	bash scripts/tsan.sh

# libFuzzer targets for FUZZ_SECONDS each (default 30).
fuzz:
	bash scripts/fuzz.sh $(or $(FUZZ_SECONDS),30)

# Benchmark suite: prints the ratio table and writes bench/RESULTS.md.
bench:
	bash scripts/bench.sh

# Only the Icechunk rows (data from BENCH_ICECHUNK_DATA, else written by the real Icechunk in a Debian 13 chroot; see scripts/bench.sh).
bench-icechunk:
	bash scripts/bench.sh --icechunk-only

# Only the one-day appends (plain store vs Icechunk repository) and the compaction (issue 30).
bench-append:
	bash scripts/bench.sh --append-only

# Only the pan rows (issue 44; GDAL 3.13's own driver beside it with BENCH_SID_CHROOT; see scripts/bench.sh).
bench-pan:
	bash scripts/bench.sh --pan-only

# Only the scripted QGIS pan (issue 44; python3-qgis; GDAL 3.13's driver in sid's QGIS with BENCH_SID_CHROOT).
bench-qgis-pan:
	bash scripts/bench.sh --qgis-pan-only

# Only zarr3 virtualize of 100 daily NetCDF-4 files and the virtual array's full read against GDAL's netCDF driver (issue 42).
bench-virtualize:
	bash scripts/bench.sh --virtualize-only

# Only the many-writers rows (issue 43; moto_server and python3-distributed; see scripts/bench.sh).
bench-writers:
	bash scripts/bench.sh --writers-only

clean:
	rm -rf $(BUILD_DIR)
