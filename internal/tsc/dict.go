package tsc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/parallel"
)

// dictUpdater is a plan for the dictionary step of 2DSC (docs/model.md §4): with
// the coefficients B fixed it solves
//
//	min_D ½‖X − D*B‖_F²  s.t.  ‖D(:,j,:)‖_F² ≤ 1, j = 1..R,
//
// by the Lagrange dual in the Fourier domain. By Parseval the problem splits
// over the stored frequency slices ℓ (weights w_ℓ of Weight), coupled only
// through the norm constraints Σ_ℓ w_ℓ ‖D̂^(ℓ)(:,j)‖² ≤ K. For multipliers
// λ ≥ 0 the minimiser is D̂^(ℓ) = (X̂B̂ᴴ)(B̂B̂ᴴ + Λ)⁻¹ and λ maximises the
// concave dual
//
//	g(λ) = Σ_ℓ w_ℓ [‖X̂^(ℓ)‖² − tr(X̂B̂ᴴ (B̂B̂ᴴ + Λ)⁻¹ (X̂B̂ᴴ)ᴴ)] − K Σ_j λ_j,
//
// whose maximum is K‖X − D*B‖_F² at the optimum. It is maximised by
// projected Newton (Bertsekas 1982) with an Armijo line search.
//
// Only X̂B̂ᴴ (M×R) and B̂B̂ᴴ (R×R, Hermitian) of every stored slice touch the
// data; they are gathered in one pass over the batch, skipping the atoms
// whose coefficient tube is zero in a patch (B is sparse), in real
// arithmetic on the real slices (ℓ = 0, and ℓ = K/2 for even K). The pass is
// split into chunks fixed by the batch size alone and the partial sums are
// added in chunk order, so the result does not depend on the thread count.
//
// A dictUpdater holds workspace and is not safe for concurrent use.
type dictUpdater struct {
	m, r, k, s int
	threads    int
	dft        *tproduct.DFT
	work       []chunkWork // per-goroutine scratch of the passes
	dual       dualSolver
	dh         *tproduct.FTensor // D̂ of the candidate dictionary
	dnew       *tproduct.Tensor  // candidate dictionary
	parts      []*partialStats   // per-chunk sums of accumulate
	res        []float64
	pnorm      []float64
}

// updateInfo reports on one dictionary update.
type updateInfo struct {
	// Objective is ½‖X − D*B‖_F² with the updated dictionary (the data term
	// of the 2DSC objective; add β‖B‖₁ for the whole objective).
	Objective float64
	// Previous is the same quantity with the dictionary passed in.
	Previous float64
	// NewtonIterations is the number of projected Newton steps taken.
	NewtonIterations int
	// Converged reports whether the dual reached its tolerance: every live
	// atom's squared norm within 1e−10 of 1 where λ_j > 0 and at most that
	// where λ_j = 0.
	Converged bool
	// Dead is the number of atoms whose coefficient row was zero for every
	// patch; they were re-seeded with the worst-reconstructed patches.
	Dead int
	// Rescaled is the number of atoms whose norm came out of the
	// approximately solved dual slightly above 1 and was scaled down to 1.
	Rescaled int
	// KeptInput reports that the solved dictionary would not have lowered
	// the objective, so the (feasible) input dictionary was kept, apart from
	// re-seeded dead atoms.
	KeptInput bool
}

// Tolerances of the dual solve.
const (
	// dualGradTol bounds |‖D(:,j,:)‖² − 1| at convergence.
	dualGradTol = 1e-10
	// dualMaxIter caps the projected Newton steps; the dual usually
	// converges in well under 30.
	dualMaxIter = 100
	// ridgeRel is the ridge added to B̂B̂ᴴ + Λ relative to its largest
	// diagonal entry. It keeps the Cholesky factorisation defined when an
	// atom's coefficients vanish in some frequency slices only (a constant
	// tube has no ℓ > 0 content) while its multiplier is zero; its effect on
	// the objective is of relative order 1e−11.
	ridgeRel = 1e-11
)

// AtomNormSlack is the slack allowed on the constraint ‖D(:,j,:)‖_F² ≤ 1 of
// a dictionary: after an update every atom satisfies ‖D(:,j,:)‖_F² ≤ 1 +
// AtomNormSlack, and an input dictionary within it counts as feasible.
const AtomNormSlack = 1e-9

// newDictUpdater returns a plan for dictionaries of r atoms of size m×1×k.
// threads ≤ 0 means runtime.GOMAXPROCS(0); the results do not depend on it.
// It panics if a size is not positive.
func newDictUpdater(m, r, k, threads int) *dictUpdater {
	if m <= 0 || r <= 0 || k <= 0 {
		panic(fmt.Sprintf("tsc: bad dictionary size %d×%d×%d", m, r, k))
	}
	threads = parallel.Workers(threads)
	s := tproduct.Stored(k)
	u := &dictUpdater{
		m: m, r: r, k: k, s: s,
		threads: threads,
		dft:     tproduct.NewDFT(k),
		dh:      tproduct.NewFTensor(m, r, k),
		dnew:    tproduct.NewTensor(m, r, k),
	}
	tw := newTwiddles(k)
	u.work = make([]chunkWork, threads)
	for i := range u.work {
		u.work[i].init(tw, m, r)
	}
	u.dual.init(m, r, k)
	return u
}

func (u *dictUpdater) checkShapes(d, x, b *tproduct.Tensor) {
	if d != nil && (d.M != u.m || d.N != u.r || d.K != u.k) {
		panic(fmt.Sprintf("tsc: dictionary is %d×%d×%d, plan is for %d×%d×%d", d.M, d.N, d.K, u.m, u.r, u.k))
	}
	if x.M != u.m || x.K != u.k {
		panic(fmt.Sprintf("tsc: patches are %d×%d×%d, plan is for %d×N×%d", x.M, x.N, x.K, u.m, u.k))
	}
	if b.M != u.r || b.N != x.N || b.K != u.k {
		panic(fmt.Sprintf("tsc: coefficients are %d×%d×%d, want %d×%d×%d", b.M, b.N, b.K, u.r, x.N, u.k))
	}
}

// dictStats holds the data statistics of the dictionary step for one batch.
type dictStats struct {
	m, r, k int
	// xbh[ℓ] is X̂B̂ᴴ of stored slice ℓ, stored transposed (R×M row-major,
	// without conjugation): element (i, q) at [q*M+i], so that the column of
	// every atom is contiguous.
	xbh [][]complex128
	// bbh[ℓ] is B̂B̂ᴴ of stored slice ℓ, R×R row-major, Hermitian.
	bbh [][]complex128
	// xx is ‖X‖_F², l1 is ‖B‖₁ (time domain).
	xx, l1 float64
	// rowEnergy[q] is ‖B(q,:,:)‖_F²; zero marks a dead atom.
	rowEnergy []float64
	// finite is false if X or B held a NaN or an infinity.
	finite bool
}

func (st *dictStats) init(m, r, k int) {
	s := tproduct.Stored(k)
	st.m, st.r, st.k = m, r, k
	st.xbh = make([][]complex128, s)
	st.bbh = make([][]complex128, s)
	for l := range s {
		st.xbh[l] = make([]complex128, r*m)
		st.bbh[l] = make([]complex128, r*r)
	}
	st.rowEnergy = make([]float64, r)
}

// dataTerm returns ‖X − D*B‖_F² for the dictionary whose Fourier form is dh
// (M×R×K), from the statistics: (1/K) Σ_ℓ w_ℓ [‖X̂‖² − 2 Re tr(D̂ᴴ X̂B̂ᴴ) +
// tr(D̂ B̂B̂ᴴ D̂ᴴ)]. It is clamped at zero against round-off.
func (st *dictStats) dataTerm(dh *tproduct.FTensor) float64 {
	m, r, k := st.m, st.r, st.k
	var cross, quad float64
	for l := range tproduct.Stored(k) {
		w := tproduct.Weight(l, k)
		ds, e, g := dh.Slice(l), st.xbh[l], st.bbh[l]
		var c, qd float64
		for i := range m {
			row := ds[i*r : (i+1)*r]
			for q, v := range row {
				c += real(cmplx.Conj(v) * e[q*m+i])
			}
			for q1, v1 := range row {
				if v1 == 0 {
					continue
				}
				var t complex128
				for q2, v2 := range row {
					t += g[q1*r+q2] * cmplx.Conj(v2)
				}
				qd += real(v1 * t)
			}
		}
		cross += w * c
		quad += w * qd
	}
	return max(st.xx-(2*cross-quad)/float64(k), 0)
}

// chunkWork is the scratch of one goroutine in a pass over the batch.
type chunkWork struct {
	tw  *twiddles
	xr  [][]float64    // Re x̂ of the current patch, per stored slice (len M)
	xi  [][]float64    // Im x̂, likewise
	bh  [][]complex128 // b̂ of the current patch's active atoms, per slice
	act []int          // active atoms of the current patch
	// energy[q] is ‖B(q,j,:)‖² of the current patch j (zero when inactive),
	// l1 is ‖B(:,j,:)‖₁.
	energy []float64
	l1     float64
}

// twiddles holds cos and sin of 2π·(ℓt mod k)/k at [ℓ*k+t] for the stored
// frequencies ℓ, for transforms written out in the passes (the forward DFT
// convention of type DFT: X̂_ℓ = Σ_t x_t e^{−2πiℓt/k}).
type twiddles struct {
	k        int
	cos, sin []float64
}

func newTwiddles(k int) *twiddles {
	s := tproduct.Stored(k)
	tw := &twiddles{k: k, cos: make([]float64, s*k), sin: make([]float64, s*k)}
	for l := range s {
		for t := range k {
			switch lt := l * t % k; {
			case lt == 0:
				tw.cos[l*k+t] = 1
			case 2*lt == k:
				// Exactly −1 and 0, so that the spectrum of slice K/2 is
				// exactly real.
				tw.cos[l*k+t] = -1
			default:
				a := 2 * math.Pi * float64(lt) / float64(k)
				tw.cos[l*k+t], tw.sin[l*k+t] = math.Cos(a), math.Sin(a)
			}
		}
	}
	return tw
}

func (w *chunkWork) init(tw *twiddles, m, r int) {
	s := tproduct.Stored(tw.k)
	w.tw = tw
	w.xr = make([][]float64, s)
	w.xi = make([][]float64, s)
	w.bh = make([][]complex128, s)
	for l := range s {
		w.xr[l] = make([]float64, m)
		w.xi[l] = make([]float64, m)
		w.bh[l] = make([]complex128, r)
	}
	w.act = make([]int, 0, r)
	w.energy = make([]float64, r)
}

// patchSpectra finds the active atoms of patch j (w.act: those with a
// non-zero coefficient tube, with w.energy and w.l1) and loads the stored
// spectra of the patch into w.xr, w.xi and of its active coefficient tubes
// into w.bh (in the order of w.act). It returns false, computing no
// spectra, when no atom is active in the patch.
func (w *chunkWork) patchSpectra(x, b *tproduct.Tensor, j int) bool {
	m, r, k := x.M, b.M, x.K
	bc := b.Lateral(j)
	energy := w.energy[:r]
	clear(energy)
	var l1 float64
	for t := range k {
		row := bc[t*r : (t+1)*r]
		energy := energy[:len(row)]
		for q, v := range row {
			if v != 0 {
				energy[q] += v * v
				l1 += math.Abs(v)
			}
		}
	}
	w.l1 = l1
	w.act = w.act[:0]
	for q, e := range energy {
		// Tubes whose squares underflow count as zero, here and in the
		// detection of dead atoms alike.
		if e != 0 {
			w.act = append(w.act, q)
		}
	}
	if len(w.act) == 0 {
		return false
	}
	tw := w.tw
	xc := x.Lateral(j)
	for l := range w.xr {
		re := w.xr[l][:m]
		copy(re, xc[:m])
		if l == 0 {
			for t := 1; t < k; t++ {
				src := xc[t*m : (t+1)*m]
				re := re[:len(src)]
				for i, v := range src {
					re[i] += v
				}
			}
			continue
		}
		im := w.xi[l][:m]
		clear(im)
		for t := 1; t < k; t++ {
			c, sn := tw.cos[l*k+t], tw.sin[l*k+t]
			src := xc[t*m : (t+1)*m]
			re, im := re[:len(src)], im[:len(src)]
			for i, v := range src {
				re[i] += c * v
				im[i] -= sn * v
			}
		}
	}
	for a, q := range w.act {
		for l := range w.bh {
			var re, im float64
			for t := range k {
				v := bc[t*r+q]
				re += v * tw.cos[l*k+t]
				im -= v * tw.sin[l*k+t]
			}
			w.bh[l][a] = complex(re, im)
		}
	}
	return true
}

// partialStats are the sums of one chunk, with real and imaginary parts in
// separate arrays (the imaginary ones unused on the real slices).
type partialStats struct {
	xbhRe, xbhIm [][]float64 // layout of dictStats.xbh
	bbhRe, bbhIm [][]float64 // layout of dictStats.bbh, upper triangle
	xx, l1       float64
	rowEnergy    []float64
	finite       bool
}

func isRealSlice(l, k int) bool { return l == 0 || 2*l == k }

func newPartialStats(m, r, k int) *partialStats {
	s := tproduct.Stored(k)
	p := &partialStats{
		xbhRe: make([][]float64, s), xbhIm: make([][]float64, s),
		bbhRe: make([][]float64, s), bbhIm: make([][]float64, s),
		rowEnergy: make([]float64, r),
	}
	for l := range s {
		p.xbhRe[l] = make([]float64, r*m)
		p.bbhRe[l] = make([]float64, r*r)
		if !isRealSlice(l, k) {
			p.xbhIm[l] = make([]float64, r*m)
			p.bbhIm[l] = make([]float64, r*r)
		}
	}
	return p
}

func (p *partialStats) reset() {
	for l := range p.xbhRe {
		clear(p.xbhRe[l])
		clear(p.xbhIm[l])
		clear(p.bbhRe[l])
		clear(p.bbhIm[l])
	}
	clear(p.rowEnergy)
	p.xx, p.l1 = 0, 0
}

// chunkBounds splits n patches into chunks that depend on n only: at most
// 32 chunks of at least 1024 patches (fewer for small batches).
func chunkBounds(n int) (chunks, size int) {
	const minChunk, maxChunks = 1024, 32
	chunks = min(max((n+minChunk-1)/minChunk, 1), maxChunks)
	size = (n + chunks - 1) / chunks
	return (n + size - 1) / size, size
}

// forChunks runs fn(worker, chunk, j0, j1) for every chunk of n patches on
// up to u.threads goroutines; worker indexes u.work. Once ctx is done it
// starts no further chunk and returns ctx.Err().
func (u *dictUpdater) forChunks(ctx context.Context, n int, fn func(w *chunkWork, c, j0, j1 int)) error {
	chunks, size := chunkBounds(n)
	return parallel.For(ctx, chunks, u.threads, func(w, c int) error {
		fn(&u.work[w], c, c*size, min((c+1)*size, n))
		return nil
	})
}

// accumulate fills st with the statistics of patches x and coefficients b.
// If ctx is done before every chunk is summed, it returns ctx.Err() and st
// is not usable.
func (u *dictUpdater) accumulate(ctx context.Context, st *dictStats, x, b *tproduct.Tensor) error {
	u.checkShapes(nil, x, b)
	m, r, k := u.m, u.r, u.k
	chunks, _ := chunkBounds(x.N)
	for len(u.parts) < chunks {
		u.parts = append(u.parts, newPartialStats(m, r, k))
	}
	parts := u.parts[:chunks]
	err := u.forChunks(ctx, x.N, func(w *chunkWork, c, j0, j1 int) {
		parts[c].reset()
		u.accumulateChunk(parts[c], w, x, b, j0, j1)
	})
	if err != nil {
		return err
	}
	for l := range u.s {
		clear(st.xbh[l])
		clear(st.bbh[l])
	}
	clear(st.rowEnergy)
	st.xx, st.l1, st.finite = 0, 0, true
	for _, p := range parts {
		st.xx += p.xx
		st.l1 += p.l1
		st.finite = st.finite && p.finite
		for q, v := range p.rowEnergy {
			st.rowEnergy[q] += v
		}
		for l := range u.s {
			if isRealSlice(l, k) {
				for i, v := range p.xbhRe[l] {
					st.xbh[l][i] += complex(v, 0)
				}
				for i, v := range p.bbhRe[l] {
					st.bbh[l][i] += complex(v, 0)
				}
				continue
			}
			for i, v := range p.xbhRe[l] {
				st.xbh[l][i] += complex(v, p.xbhIm[l][i])
			}
			for i, v := range p.bbhRe[l] {
				st.bbh[l][i] += complex(v, p.bbhIm[l][i])
			}
		}
	}
	// Only the upper triangles were summed: fill in the lower ones.
	for l := range u.s {
		g := st.bbh[l]
		for q1 := range r {
			g[q1*r+q1] = complex(real(g[q1*r+q1]), 0)
			for q2 := q1 + 1; q2 < r; q2++ {
				g[q2*r+q1] = cmplx.Conj(g[q1*r+q2])
			}
		}
	}
	st.finite = st.finite && !math.IsNaN(st.xx) && !math.IsInf(st.xx, 0) &&
		!math.IsNaN(st.l1) && !math.IsInf(st.l1, 0)
	return nil
}

// accumulateChunk sums the statistics of patches j0..j1-1 into p.
func (u *dictUpdater) accumulateChunk(p *partialStats, w *chunkWork, x, b *tproduct.Tensor, j0, j1 int) {
	m, r, k := u.m, u.r, u.k
	p.finite = true
	for j := j0; j < j1; j++ {
		p.xx += sumSquares(x.Lateral(j))
		active := w.patchSpectra(x, b, j)
		p.l1 += w.l1
		if !active {
			continue
		}
		for _, q := range w.act {
			p.rowEnergy[q] += w.energy[q]
		}
		na := len(w.act)
		for l := range u.s {
			xr, xi, bh := w.xr[l], w.xi[l], w.bh[l][:na]
			if isRealSlice(l, k) {
				e, g := p.xbhRe[l], p.bbhRe[l]
				for a, q := range w.act {
					c := real(bh[a])
					col := e[q*m : (q+1)*m]
					col = col[:len(xr)]
					for i, v := range xr {
						col[i] += c * v
					}
					for a2 := a; a2 < na; a2++ {
						g[q*r+w.act[a2]] += c * real(bh[a2])
					}
				}
				continue
			}
			// E(:,q) += x̂·conj(b̂_q), S(q,q2) += b̂_q·conj(b̂_q2).
			er, ei, gr, gi := p.xbhRe[l], p.xbhIm[l], p.bbhRe[l], p.bbhIm[l]
			for a, q := range w.act {
				br, bi := real(bh[a]), imag(bh[a])
				cr, ci := er[q*m:(q+1)*m], ei[q*m:(q+1)*m]
				cr, ci, xi := cr[:len(xr)], ci[:len(xr)], xi[:len(xr)]
				for i, v := range xr {
					y := xi[i]
					cr[i] += v*br + y*bi
					ci[i] += y*br - v*bi
				}
				for a2 := a; a2 < na; a2++ {
					q2 := w.act[a2]
					cr, ci := real(bh[a2]), imag(bh[a2])
					gr[q*r+q2] += br*cr + bi*ci
					gi[q*r+q2] += bi*cr - br*ci
				}
			}
		}
	}
	for _, v := range p.rowEnergy {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			p.finite = false
		}
	}
}

// errNotFinite is returned when the patches or coefficients hold a NaN or
// an infinity.
var errNotFinite = errors.New("tsc: dictionary update: patches or coefficients hold NaN or Inf")

// solve replaces d (M×R×K) by the solution of the dictionary problem for
// the patches x (M×N×K) and their coefficients b (R×N×K), whose statistics
// st accumulate has gathered.
//
// Atoms whose coefficient row is zero for every patch ("dead") are left out
// of the dual and re-seeded with the normalised patches of largest residual
// ‖X_j − (D*B)_j‖ under the updated dictionary, a distinct patch for each
// (zero patches are never used; if there are too few usable patches, the
// remaining dead atoms keep their previous value, scaled into the unit
// ball). When the dual is solved only approximately, atoms whose squared
// norm exceeds 1 are scaled to norm 1, so that afterwards every atom has
// ‖D(:,j,:)‖_F² ≤ 1 + 1e−9. If the input d is feasible and the solution
// would not lower ½‖X − D*B‖², d is kept (apart from re-seeded atoms): the
// update never increases the objective.
//
// solve returns an error if x or b holds a NaN or an infinity, and
// ctx.Err() if ctx is done before the re-seeding ends; d is then unchanged.
// It panics if the sizes do not match the plan.
func (u *dictUpdater) solve(ctx context.Context, d *tproduct.Tensor, st *dictStats, x, b *tproduct.Tensor) (updateInfo, error) {
	u.checkShapes(d, x, b)
	var info updateInfo
	if !st.finite {
		return info, errNotFinite
	}
	r := u.r
	u.dft.Forward(u.dh, d)
	info.Previous = st.dataTerm(u.dh) / 2
	inputFeasible := true
	for j := range r {
		if sumSquares(d.Lateral(j)) > 1+AtomNormSlack {
			inputFeasible = false
		}
	}

	// Live atoms go into the dual; dead ones are re-seeded below.
	live := make([]int, 0, r)
	var dead []int
	for q, e := range st.rowEnergy {
		if e > 0 {
			live = append(live, q)
		} else {
			dead = append(dead, q)
		}
	}
	info.Dead = len(dead)

	copy(u.dnew.Data, d.Data)
	if len(live) > 0 {
		u.dual.load(st, live)
		var ok bool
		info.NewtonIterations, info.Converged, ok = u.dual.maximise()
		if ok {
			u.dual.writeAtoms(u.dnew, live, u.dft)
		}
	}
	// Feasibility whatever the accuracy of the dual, and for the values
	// kept in dead atoms.
	for j := range r {
		a := u.dnew.Lateral(j)
		if n2 := sumSquares(a); n2 > 1 {
			s := 1 / math.Sqrt(n2)
			for i := range a {
				a[i] *= s
			}
			if len(live) > 0 && st.rowEnergy[j] > 0 {
				info.Rescaled++
			}
		}
	}
	u.dft.Forward(u.dh, u.dnew)
	info.Objective = st.dataTerm(u.dh) / 2
	if inputFeasible && info.Objective > info.Previous {
		copy(u.dnew.Data, d.Data)
		info.Objective = info.Previous
		info.KeptInput = true
	}
	if len(dead) > 0 {
		if err := u.reseed(ctx, u.dnew, dead, x, b); err != nil {
			return updateInfo{}, err
		}
	}
	copy(d.Data, u.dnew.Data)
	return info, nil
}

// sumSquares returns Σ v², with four partial sums to shorten the chain of
// dependent additions.
func sumSquares(v []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		w := v[i : i+4 : i+4]
		s0 += w[0] * w[0]
		s1 += w[1] * w[1]
		s2 += w[2] * w[2]
		s3 += w[3] * w[3]
	}
	for _, x := range v[i:] {
		s0 += x * x
	}
	return (s0 + s1) + (s2 + s3)
}

// reseed sets the dead atoms of d to the normalised patches of x with the
// largest residual ‖X_j − (D*B)_j‖ under d (whose dead atoms have no
// coefficients, so their values do not matter), a distinct patch for each.
// Ties go to the lower patch index. Atoms left without a usable patch keep
// their value. If ctx is done before every residual is known, it returns
// ctx.Err() and leaves d as it was.
func (u *dictUpdater) reseed(ctx context.Context, d *tproduct.Tensor, dead []int, x, b *tproduct.Tensor) error {
	m, r, k, n := u.m, u.r, u.k, x.N
	u.dft.Forward(u.dh, d)
	if cap(u.res) < n {
		u.res = make([]float64, n)
		u.pnorm = make([]float64, n)
	}
	res, pnorm := u.res[:n], u.pnorm[:n]
	err := u.forChunks(ctx, n, func(w *chunkWork, _, j0, j1 int) {
		for j := j0; j < j1; j++ {
			pnorm[j] = sumSquares(x.Lateral(j))
			if !w.patchSpectra(x, b, j) {
				res[j] = pnorm[j]
				continue
			}
			// Residual by Parseval: (1/K) Σ_ℓ w_ℓ ‖x̂ − D̂ b̂‖².
			var e float64
			for l := range u.s {
				ds, xr, xi, bh := u.dh.Slice(l), w.xr[l], w.xi[l], w.bh[l]
				var el float64
				for i := range m {
					v := complex(xr[i], xi[i])
					row := ds[i*r : (i+1)*r]
					for a, q := range w.act {
						v -= row[q] * bh[a]
					}
					el += real(v)*real(v) + imag(v)*imag(v)
				}
				e += tproduct.Weight(l, k) * el
			}
			res[j] = e / float64(k)
		}
	})
	if err != nil {
		return err
	}
	for _, q := range dead {
		best := -1
		for j, e := range res {
			if pnorm[j] > 0 && e >= 0 && (best < 0 || e > res[best]) {
				best = j
			}
		}
		if best < 0 {
			return nil
		}
		res[best] = -1 // used
		src, dst := x.Lateral(best), d.Lateral(q)
		s := 1 / math.Sqrt(pnorm[best])
		for i, v := range src {
			dst[i] = v * s
		}
		// Guard the round-off of the scaling.
		if n2 := sumSquares(dst); n2 > 1 {
			s := 1 / math.Sqrt(n2)
			for i := range dst {
				dst[i] *= s
			}
		}
	}
	return nil
}
