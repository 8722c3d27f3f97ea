# Everyday targets. TDSC_DATA points the tests and scripts at the shared CAVE
# data (../shared/data beside the clone) unless it is set already.
GO        ?= go
BIN       := bin/tdsc
export TDSC_DATA ?= $(abspath ../shared/data)

# OpenBLAS is used when its development library links; otherwise the build
# is pure Go (gonum). `tdsc --version` tells which.
HAVE_OPENBLAS := $(shell printf 'int main(void){return 0;}' | cc -x c - -lopenblas -o /dev/null 2>/dev/null && echo yes)
ifeq ($(HAVE_OPENBLAS),yes)
TAGS += openblas
export CGO_LDFLAGS += -lopenblas
endif
# OpenBLAS runs single-threaded: tdsc parallelises over patch batches itself.
export OPENBLAS_NUM_THREADS := 1

# GDAL (GeoTIFF and every raster GDAL reads) is used when its development
# library links; otherwise the build answers a GeoTIFF with how to get
# one. `tdsc --version` tells which.
HAVE_GDAL := $(shell pkg-config --exists gdal 2>/dev/null && printf '#include <gdal.h>\nint main(void){GDALAllRegister();return 0;}' | cc -x c - $$(pkg-config --cflags --libs gdal) -o /dev/null 2>/dev/null && echo yes)
ifeq ($(HAVE_GDAL),yes)
TAGS += gdal
endif

comma := ,
empty :=
space := $(empty) $(empty)
BUILD_TAGS := $(if $(strip $(TAGS)),-tags $(subst $(space),$(comma),$(strip $(TAGS))))

.PHONY: build test test-short bench demo fuzz lint table2 fig5 clean

build:
	$(GO) build $(BUILD_TAGS) -o $(BIN) .

# The whole suite in the pure-Go build, the solver again with its portable
# Go loops instead of the amd64 assembly kernels (tag purego), then the
# build `make build` makes (OpenBLAS and GDAL, when they link): the solver,
# the formats and the command line. The tagged run leaves out
# TestEveryShape: its 11 776 runs of the binary check code that every build
# shares, and each start of a GDAL binary loads GDAL's shared libraries
# (about 0.07 s), which would add ten minutes.
test:
	$(GO) test ./...
	$(GO) test -tags purego ./internal/tsc/...
ifneq ($(strip $(TAGS)),)
	$(GO) test $(BUILD_TAGS) -skip '^TestEveryShape$$' ./internal/algebra/tproduct/... ./internal/tsc/... ./internal/formats/... ./cmd/...
endif

# The inner loop: every package without the full-scene runs and the heavy
# command-line runs (go test -short), well under a minute.
test-short:
	$(GO) test -short ./...

bench:
	$(GO) test $(BUILD_TAGS) -run '^$$' -bench . -benchtime 3x ./...

demo: build
	./scripts/demo.sh $(BIN)

fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseENVIHeader$$' -fuzztime 15s ./internal/formats/envi
	$(GO) test -run '^$$' -fuzz '^FuzzENVIReadLines$$' -fuzztime 15s ./internal/formats/envi
	$(GO) test -run '^$$' -fuzz '^FuzzReadPNGStack$$' -fuzztime 15s ./internal/formats/pngstack
	$(GO) test -run '^$$' -fuzz '^FuzzReadNPY$$' -fuzztime 15s ./internal/formats/npy
	$(GO) test -run '^$$' -fuzz '^FuzzReadLines$$' -fuzztime 15s ./internal/formats/npy
	$(GO) test -run '^$$' -fuzz '^FuzzReadTypes$$' -fuzztime 15s ./internal/formats/npy
	$(GO) test -run '^$$' -fuzz '^FuzzReadMAT$$' -fuzztime 15s ./internal/formats/mat
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime 15s ./internal/formats/mat/internal/matfile
	$(GO) test -run '^$$' -fuzz '^FuzzParseHDF5$$' -fuzztime 15s ./internal/formats/mat/internal/matfile
	$(GO) test -run '^$$' -fuzz '^FuzzReadHDF5$$' -fuzztime 15s ./internal/formats/hdf5
	$(GO) test -run '^$$' -fuzz '^FuzzReadModel$$' -fuzztime 15s ./internal/dictfile
	$(GO) test -run '^$$' -fuzz '^FuzzReadPNG$$' -fuzztime 15s ./internal/gray
	$(GO) test -run '^$$' -fuzz '^FuzzParseBaseline$$' -fuzztime 15s ./internal/metrics/gate
	$(GO) test -run '^$$' -fuzz '^FuzzReadPlan$$' -fuzztime 15s ./internal/batch

lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo 'gofmt: the files above need formatting'; exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

STATICCHECK_VERSION ?= v0.8.2

table2: build
	./scripts/table2.sh

fig5: build
	./scripts/fig5.sh

clean:
	rm -rf bin
