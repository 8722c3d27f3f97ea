package denoise

import (
	"context"
	"fmt"

	"tdsc/internal/dictfile"
	"tdsc/internal/methods/bwksvd"
	"tdsc/internal/methods/ksvd3d"
	"tdsc/internal/methods/lrta"
	"tdsc/internal/methods/nonlocal"
	"tdsc/internal/methods/parafac"
	"tdsc/internal/methods/sc"
	"tdsc/internal/methods/tensr"
	"tdsc/internal/methods/twodsc"
	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/report"
	"tdsc/internal/tile"
)

// Config holds the settings of every method; each reads only the ones its
// Spec lists. A zero field means the method's default.
type Config struct {
	// Sigma is the noise level on the [0, 255] scale when the caller knows
	// it, else 0 (ResolveSigma).
	Sigma float64
	// Threads is the number of worker goroutines (0: GOMAXPROCS); the
	// output does not depend on it.
	Threads int
	// Report receives progress and log lines (nil: none).
	Report report.Reporter
	// CreatedBy names the program in files a method writes.
	CreatedBy string

	// TwoDSC are the settings of the 2DSC pipeline: of the method 2dsc and
	// of the pilot estimate of nonlocal. Its fields also carry the patch and
	// dictionary settings that other methods read under the same flag
	// spelling (--patch, --depth, --stride, --atoms, --samples, --iters,
	// --seed: Spec.Options says which); a zero field is the reading
	// method's own default.
	TwoDSC twodsc.Options
	// Dict is a 2DSC dictionary to code with instead of learning one (2dsc).
	Dict *dictfile.Model
	// Nonlocal are the settings of the nonlocal stages; its Pilot and
	// Threads are taken from TwoDSC and Threads. Its Rank is also the CP
	// rank of parafac (--rank).
	Nonlocal nonlocal.Options
	// TuckerRanks are lrta's subspace dimensions of the row, column and
	// band modes (--ranks); a zero entry is chosen from the data.
	TuckerRanks [3]int
}

// twodscOptions are the flag spellings of the settings in Config.TwoDSC.
var twodscOptions = []string{"beta", "patch", "depth", "stride", "atoms", "samples", "iters", "inner-iters", "code-iters", "weights", "seed"}

// registry lists the methods, the default first.
func registry() []Spec {
	return []Spec{
		{
			Name:    "nonlocal",
			Summary: "a 2DSC pilot, then collaborative Wiener and spectral-subspace low-rank stages on groups of similar patches",
			Options: append([]string{"wiener", "rounds", "rank", "group"}, twodscOptions...),
			New:     newNonlocal,
			// Peak RSS 872 MiB.
			BytesPerVoxel: 113,
		},
		{
			Name:    "2dsc",
			Summary: "the paper's two-dimensional sparse coding of 5×5×5 patches (local)",
			Options: append([]string{"dict", "save-dict"}, twodscOptions...),
			New:     newTwoDSC,
			// Peak RSS 396 MiB.
			BytesPerVoxel: 52,
		},
		{
			Name:    "bwksvd",
			Summary: "band-wise K-SVD (Elad and Aharon 2006): each band as a grey image, 8×8 patches, 256 atoms (paper's baseline)",
			Options: []string{"patch", "atoms", "iters", "samples", "stride", "seed"},
			New:     newBWKSVD,
			// Peak RSS 356 MiB.
			BytesPerVoxel: 46,
		},
		{
			Name:    "3dksvd",
			Summary: "K-SVD on 5×5×5 spatio-spectral patches, 320 atoms (paper's baseline)",
			Options: []string{"patch", "depth", "atoms", "iters", "samples", "stride", "seed"},
			New:     newKSVD3D,
			// Peak RSS 356 MiB.
			BytesPerVoxel: 46,
		},
		{
			Name:    "lrta",
			Summary: "low-rank tensor approximation with multiway Wiener filtering (Renard et al. 2008), ranks by AIC (paper's baseline)",
			Options: []string{"ranks", "iters"},
			New:     newLRTA,
			// Peak RSS 503 MiB.
			BytesPerVoxel: 65,
		},
		{
			Name:    "parafac",
			Summary: "PARAFAC/CP decomposition of the cube (Liu et al. 2012), rank by the discrepancy principle (paper's baseline; slow)",
			Options: []string{"rank", "iters", "seed"},
			New:     newPARAFAC,
			// Peak RSS 542 MiB.
			BytesPerVoxel: 70,
		},
		{
			Name:    "tensr",
			Summary: "TenSR (Qi et al. 2015): 5×5×5 patches over separable per-mode dictionaries, sparse cores (paper's baseline)",
			Options: []string{"patch", "depth", "stride", "atoms", "beta", "iters", "code-iters", "samples", "seed"},
			New:     newTenSR,
			// Peak RSS 356 MiB.
			BytesPerVoxel: 46,
		},
		{
			Name:    "sc",
			Summary: "conventional sparse coding of the same patches as 2dsc, each a p²q-vector (the paper's baseline; 150 atoms)",
			Options: twodscOptions,
			New:     newSC,
			// Peak RSS 414 MiB.
			BytesPerVoxel: 54,
		},
	}
}

// twoDSC is the method 2dsc: the twodsc pipeline.
type twoDSC struct {
	d          twodsc.Denoiser
	knownSigma float64
}

func newTwoDSC(c Config) (Method, error) {
	m := &twoDSC{d: twodsc.Denoiser{Options: c.TwoDSC, Model: c.Dict, CreatedBy: c.CreatedBy, Report: c.Report}}
	m.d.Options.Threads = c.Threads
	if c.Dict != nil {
		s, err := m.d.Options.Adopt(c.Dict, c.Sigma != 0)
		if err != nil {
			return nil, err
		}
		m.knownSigma = s
	}
	return m, nil
}

func (m *twoDSC) Name() string { return "2dsc" }

func (m *twoDSC) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, error) {
	return m.d.Denoise(ctx, noisy, sigma)
}

// TileGeometry and PrepareTiles make 2dsc a Tiler: its strips give the
// whole cube's result bit for bit.
func (m *twoDSC) TileGeometry(sigma float64) tile.Geometry { return m.d.TileGeometry(sigma) }

func (m *twoDSC) PrepareTiles(ctx context.Context, r tile.Reader, strips []tile.Strip, sigma float64) error {
	return m.d.PrepareTiles(ctx, r, strips, sigma)
}

// KnownSigma is the σ recorded in the dictionary file when its β is used.
func (m *twoDSC) KnownSigma() float64 { return m.knownSigma }

// Learned returns the dictionary the last Denoise learned (nil with Dict).
func (m *twoDSC) Learned() *dictfile.Model { return m.d.Learned() }

func (m *twoDSC) Check(sigma float64, height, width, bands int) error {
	o := m.d.Resolved(sigma)
	return o.Validate(height, width, bands)
}

func (m *twoDSC) Settings(sigma float64) []Setting {
	o := m.d.Resolved(sigma)
	return formatSettings("sigma", sigma, "beta", o.Beta, "patch", o.Patch, "depth", o.Depth, "stride", o.Stride,
		"atoms", o.Atoms, "weights", o.Weighting, "seed", o.Seed)
}

// bwksvdMethod is the method bwksvd.
type bwksvdMethod struct{ d bwksvd.Denoiser }

func newBWKSVD(c Config) (Method, error) {
	t := c.TwoDSC
	return &bwksvdMethod{d: bwksvd.Denoiser{Report: c.Report, Options: bwksvd.Options{
		Patch: t.Patch, Atoms: t.Atoms, Iters: t.TrainIters, Samples: t.Samples, Stride: t.Stride, Seed: t.Seed,
		Threads: c.Threads,
	}}}, nil
}

func (m *bwksvdMethod) Name() string { return "bwksvd" }

func (m *bwksvdMethod) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, error) {
	return m.d.Denoise(ctx, noisy, sigma)
}

func (m *bwksvdMethod) Check(sigma float64, height, width, bands int) error {
	return m.d.Options.Resolve(sigma).Validate(height, width, bands)
}

func (m *bwksvdMethod) Settings(sigma float64) []Setting {
	o := m.d.Options.Resolve(sigma)
	return formatSettings("sigma", sigma, "patch", o.Patch, "atoms", o.Atoms, "iters", o.Iters,
		"samples", o.Samples, "stride", o.Stride, "seed", o.Seed)
}

// ksvd3dMethod is the method 3dksvd.
type ksvd3dMethod struct{ d ksvd3d.Denoiser }

func newKSVD3D(c Config) (Method, error) {
	t := c.TwoDSC
	return &ksvd3dMethod{d: ksvd3d.Denoiser{Report: c.Report, Options: ksvd3d.Options{
		Patch: t.Patch, Depth: t.Depth, Atoms: t.Atoms, Iters: t.TrainIters, Samples: t.Samples, Stride: t.Stride,
		Seed: t.Seed, Threads: c.Threads,
	}}}, nil
}

func (m *ksvd3dMethod) Name() string { return "3dksvd" }

func (m *ksvd3dMethod) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, error) {
	return m.d.Denoise(ctx, noisy, sigma)
}

func (m *ksvd3dMethod) Check(sigma float64, height, width, bands int) error {
	return m.d.Options.Resolve(sigma).Validate(height, width, bands)
}

func (m *ksvd3dMethod) Settings(sigma float64) []Setting {
	o := m.d.Options.Resolve(sigma)
	return formatSettings("sigma", sigma, "patch", o.Patch, "depth", o.Depth, "atoms", o.Atoms, "iters", o.Iters,
		"samples", o.Samples, "stride", o.Stride, "seed", o.Seed)
}

// lrtaMethod is the method lrta.
type lrtaMethod struct{ d lrta.Denoiser }

func newLRTA(c Config) (Method, error) {
	return &lrtaMethod{d: lrta.Denoiser{Report: c.Report, Options: lrta.Options{
		Ranks: c.TuckerRanks, Iters: c.TwoDSC.TrainIters, Threads: c.Threads,
	}}}, nil
}

func (m *lrtaMethod) Name() string { return "lrta" }

func (m *lrtaMethod) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, error) {
	return m.d.Denoise(ctx, noisy, sigma)
}

func (m *lrtaMethod) Check(sigma float64, height, width, bands int) error {
	return m.d.Options.Resolve(sigma).Validate(height, width, bands)
}

func (m *lrtaMethod) Settings(sigma float64) []Setting {
	o := m.d.Options.Resolve(sigma)
	ranks := "auto"
	if o.Ranks != ([3]int{}) {
		ranks = fmt.Sprintf("%d,%d,%d", o.Ranks[0], o.Ranks[1], o.Ranks[2])
	}
	return formatSettings("sigma", sigma, "ranks", ranks, "iters", o.Iters)
}

// parafacMethod is the method parafac.
type parafacMethod struct{ d parafac.Denoiser }

func newPARAFAC(c Config) (Method, error) {
	return &parafacMethod{d: parafac.Denoiser{Report: c.Report, Options: parafac.Options{
		Rank: c.Nonlocal.Rank, Iters: c.TwoDSC.TrainIters, Seed: c.TwoDSC.Seed, Threads: c.Threads,
	}}}, nil
}

func (m *parafacMethod) Name() string { return "parafac" }

func (m *parafacMethod) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, error) {
	return m.d.Denoise(ctx, noisy, sigma)
}

func (m *parafacMethod) Check(sigma float64, height, width, bands int) error {
	return m.d.Options.Resolve(sigma).Validate(height, width, bands)
}

func (m *parafacMethod) Settings(sigma float64) []Setting {
	o := m.d.Options.Resolve(sigma)
	var rank any = o.Rank
	if o.Rank == 0 {
		rank = "auto"
	}
	return formatSettings("sigma", sigma, "rank", rank, "iters", o.Iters, "seed", o.Seed)
}

// tensrMethod is the method tensr.
type tensrMethod struct{ d tensr.Denoiser }

// newTenSR reads --atoms as the atom count of each of the three mode
// dictionaries (r₁ = r₂ = r₃).
func newTenSR(c Config) (Method, error) {
	t := c.TwoDSC
	if t.Atoms < 0 {
		return nil, option.Errorf("atoms", t.Atoms, "number of atoms must be at least 1, got %d", t.Atoms)
	}
	return &tensrMethod{d: tensr.Denoiser{Report: c.Report, Options: tensr.Options{
		Patch: t.Patch, Depth: t.Depth, Stride: t.Stride, Atoms: [3]int{t.Atoms, t.Atoms, t.Atoms}, Beta: t.Beta,
		Iters: t.TrainIters, CodeIters: t.CodeIters, Samples: t.Samples, Seed: t.Seed, Threads: c.Threads,
	}}}, nil
}

func (m *tensrMethod) Name() string { return "tensr" }

func (m *tensrMethod) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, error) {
	return m.d.Denoise(ctx, noisy, sigma)
}

func (m *tensrMethod) Check(sigma float64, height, width, bands int) error {
	o := m.d.Options.Resolve(sigma)
	return o.Validate(height, width, bands)
}

func (m *tensrMethod) Settings(sigma float64) []Setting {
	o := m.d.Options.Resolve(sigma)
	return formatSettings("sigma", sigma, "beta", o.Beta, "patch", o.Patch, "depth", o.Depth, "stride", o.Stride,
		"atoms", fmt.Sprintf("%d,%d,%d", o.Atoms[0], o.Atoms[1], o.Atoms[2]), "iters", o.Iters,
		"code-iters", o.CodeIters, "samples", o.Samples, "seed", o.Seed)
}

// scMethod is the method sc.
type scMethod struct{ d sc.Denoiser }

func newSC(c Config) (Method, error) {
	m := &scMethod{d: sc.Denoiser{Options: c.TwoDSC, Report: c.Report}}
	m.d.Options.Threads = c.Threads
	return m, nil
}

func (m *scMethod) Name() string { return "sc" }

func (m *scMethod) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, error) {
	return m.d.Denoise(ctx, noisy, sigma)
}

// TileGeometry and PrepareTiles make sc a Tiler, as 2dsc.
func (m *scMethod) TileGeometry(sigma float64) tile.Geometry { return m.d.TileGeometry(sigma) }

func (m *scMethod) PrepareTiles(ctx context.Context, r tile.Reader, strips []tile.Strip, sigma float64) error {
	return m.d.PrepareTiles(ctx, r, strips, sigma)
}

func (m *scMethod) Check(sigma float64, height, width, bands int) error {
	o := m.d.Resolved(sigma)
	return o.Validate(height, width, bands)
}

func (m *scMethod) Settings(sigma float64) []Setting {
	o := m.d.Resolved(sigma)
	return formatSettings("sigma", sigma, "beta", o.Beta, "patch", o.Patch, "depth", o.Depth, "stride", o.Stride,
		"atoms", o.Atoms, "weights", o.Weighting, "seed", o.Seed)
}

// nonlocalMethod is the method nonlocal.
type nonlocalMethod struct{ d nonlocal.Denoiser }

func newNonlocal(c Config) (Method, error) {
	o := c.Nonlocal
	o.Pilot, o.Threads = c.TwoDSC, c.Threads
	return &nonlocalMethod{d: nonlocal.Denoiser{Options: o, Report: c.Report}}, nil
}

func (m *nonlocalMethod) Name() string { return "nonlocal" }

func (m *nonlocalMethod) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, error) {
	return m.d.Denoise(ctx, noisy, sigma)
}

func (m *nonlocalMethod) Check(sigma float64, height, width, bands int) error {
	o := m.d.Options.Resolve(sigma)
	if err := o.Validate(); err != nil {
		return err
	}
	p := o.Pilot.Resolve(sigma)
	return p.Validate(height, width, bands)
}

func (m *nonlocalMethod) Settings(sigma float64) []Setting {
	o := m.d.Options.Resolve(sigma)
	p := o.Pilot.Resolve(sigma)
	var rank any = o.Rank
	switch {
	case o.Rank == 0 && m.d.Rank() > 0:
		rank = m.d.Rank() // chosen from the data by the last Denoise
	case o.Rank == 0:
		rank = "auto"
	}
	return formatSettings("sigma", sigma, "wiener", o.Wiener, "rounds", o.Rounds, "rank", rank, "group", o.Group,
		"pilot-beta", p.Beta, "pilot-stride", p.Stride, "seed", p.Seed)
}
