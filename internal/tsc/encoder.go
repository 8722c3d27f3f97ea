package tsc

import (
	"errors"
	"fmt"
	"math"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/tsc/internal/kernel"
)

// EncodeOptions sets the sparse-coding problem and the FISTA iteration of an
// Encoder.
type EncodeOptions struct {
	Beta    float64 // ℓ1 weight β ≥ 0
	MaxIter int     // maximum FISTA iterations (≥ 1)
	// Tol stops the iteration of a patch once ‖B_p − B_{p−1}‖_F ≤
	// Tol·‖B_p‖_F for its code (0: always run MaxIter).
	Tol float64
}

// codePath selects how the gradient step of FISTA is computed.
type codePath int

const (
	pathAuto   codePath = iota // per batch and iteration, by the density of the codes
	pathDense                  // Fourier domain, one matrix product per frequency slice
	pathSparse                 // time domain, following the non-zeros of the codes
	// pathFull is pathSparse with every step full and the batch going
	// through each iteration together: the reference that the near steps
	// must match bit for bit.
	pathFull
)

// Encoder solves the sparse-coding problem of 2DSC for a fixed dictionary D
// (M×R×K, atom q = lateral slice q):
//
//	min_B ½‖X − D*B‖_F² + β‖B‖₁
//
// for batches of patches X (M×n×K, codes B R×n×K), with FISTA (ISTA-T,
// docs/model.md §3): step 1/L with the exact Lipschitz constant
// L = max_ℓ λ_max(Ĝ^(ℓ)), Ĝ^(ℓ) = D̂^(ℓ)ᴴD̂^(ℓ); soft threshold β/L on the
// real (time-domain) coefficients; momentum t_{p+1} = (1+√(1+4t_p²))/2,
// Y_{p+1} = B_p + ((t_p−1)/t_{p+1})(B_p − B_{p−1}), t_1 = 1, Y_1 = B_0.
//
// The gradient step is Y − ∇f(Y)/L = A*Y + C/L with A = I − D†*D/L and
// C = D†*X, C computed once per batch. It is evaluated either
//
//   - densely in the Fourier domain: DFT of Y, one real matrix product per
//     stored frequency slice against the embedding of Â^(ℓ) = I − Ĝ^(ℓ)/L
//     (slice 0, and K/2 for even K, real), inverse DFT; or
//   - sparsely in the time domain: for every non-zero Y(q,j,t) of the
//     momentum point, Y(q,j,t)·A(:,q,(s−t) mod K) is added to the tubes
//     s = 0..K−1 of column j, a cost proportional to the non-zeros and free
//     of transforms.
//
// Both compute the same step up to round-off. By default the cheaper is
// chosen before every iteration from the number of non-zeros of the batch,
// and the batch goes through each iteration together. Once the sparse
// evaluation is chosen after the first iteration, it stays: every patch
// then runs all its remaining iterations on its own, one patch after the
// other, so that its data stays in the processor's cache, and most of
// those steps are near steps, which evaluate the step only where it can
// reach the threshold β/L and give the same result bit for bit
// (nearstep.go).
//
// The problem separates over patches, so every patch is iterated and
// stopped (Tol) on its own; the result for a patch depends on the other
// patches of its batch only through the choices of evaluation.
//
// An Encoder is immutable: it is safe for concurrent use by goroutines that
// each use their own Workspace.
type Encoder struct {
	m, r, k int
	opt     EncodeOptions
	dft     *tproduct.DFT

	dh   tproduct.SliceMats // embeddings of D̂^(ℓ)ᴴ (R×M)
	dmat tproduct.SliceMats // embeddings of D̂^(ℓ) (M×R), for Reconstruct
	gram tproduct.SliceMats // embeddings of Ĝ^(ℓ) (R×R)
	g    []float64          // time-domain Gram tensor G = D†*D (R×R×K, Tensor layout)
	d2   []float64          // atom q at [q·2KM, (q+1)·2KM): D(:,q,0..K−1) twice
	doff []int32            // doff[t·R+q]: the start in d2 of D(:,q,(s−t) mod K), s = 0..K−1

	// Derived from L (setLipschitz).
	lip  float64
	tau  float64            // β/L
	cmat tproduct.SliceMats // embeddings of D̂^(ℓ)ᴴ/L
	amat tproduct.SliceMats // embeddings of I − Ĝ^(ℓ)/L
	a2   []float64          // column q of A at [q·2KR, (q+1)·2KR): A(:,q,0..K−1) twice
	aoff []int32            // aoff[t·R+q]: the start in a2 of A(:,q,(s−t) mod K), s = 0..K−1
	// For the near steps (nearstep.go): a_s for every position s of a
	// code; the reaches h and h/closeRatio; the bit patterns of β/L, of
	// β/L − h and of β/L − h/closeRatio, the values above which a position
	// has a non-zero code, or is near or close.
	offPos                       []float64
	reach, closeReach            float64
	tauBits, nearBits, closeBits uint64

	// momentum[p−1] is the momentum weight (t_p − 1)/t_{p+1} of iteration
	// p ≤ min(MaxIter, momentumTable), the same for every patch; tEnd is
	// t_{len(momentum)+1}, where the weights past the table start from.
	momentum []float64
	tEnd     float64

	path codePath
	// denseCost is the modelled cost of a dense Fourier step per patch, in
	// units of one multiply-add of the sparse accumulation.
	denseCost float64
	// denseRecon is the same for the dense Fourier product of Reconstruct.
	denseRecon float64
}

// NewEncoder builds the coding plan for the dictionary d (M×R×K): the
// Fourier embeddings of D̂, D̂ᴴ and Ĝ = D̂ᴴD̂ per frequency slice, the
// time-domain Gram tensor D†*D, and the exact Lipschitz constant. It returns
// an error if the options are invalid or d is zero or not finite.
func NewEncoder(d *tproduct.Tensor, opt EncodeOptions) (*Encoder, error) {
	if d == nil || d.M <= 0 || d.N <= 0 || d.K <= 0 || len(d.Data) != d.M*d.N*d.K {
		return nil, errors.New("tsc: NewEncoder: malformed dictionary tensor")
	}
	switch {
	case !(opt.Beta >= 0) || math.IsInf(opt.Beta, 0):
		return nil, fmt.Errorf("tsc: NewEncoder: β = %v, want a finite β ≥ 0", opt.Beta)
	case opt.MaxIter < 1:
		return nil, fmt.Errorf("tsc: NewEncoder: MaxIter = %d, want at least 1", opt.MaxIter)
	case !(opt.Tol >= 0) || math.IsInf(opt.Tol, 0):
		return nil, fmt.Errorf("tsc: NewEncoder: Tol = %v, want a finite Tol ≥ 0", opt.Tol)
	}
	for _, v := range d.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("tsc: NewEncoder: the dictionary holds a NaN or infinite value")
		}
	}
	m, r, k := d.M, d.N, d.K
	e := &Encoder{m: m, r: r, k: k, opt: opt, dft: tproduct.NewDFT(k)}

	spec := make([]float64, m*k*r)
	tproduct.ForwardBlocks(e.dft, spec, d)
	e.dh = tproduct.NewSliceMats(k, r, m)
	tproduct.EmbedTensor(&e.dh, spec, m, r, true, 1)
	e.dmat = tproduct.NewSliceMats(k, m, r)
	tproduct.EmbedTensor(&e.dmat, spec, m, r, false, 1)
	e.gram = tproduct.NewSliceMats(k, r, r)
	for l := range tproduct.Stored(k) {
		h, wr, wm := e.dh.Mat(l)
		g, _, _ := e.gram.Mat(l)
		// emb(D̂ᴴ)·emb(D̂ᴴ)ᵀ = emb(D̂ᴴ)·emb(D̂) = emb(D̂ᴴD̂).
		tproduct.GemmNT(wr, wr, wm, h, wm, h, wm, g, wr)
	}
	lip, err := lipschitz(&e.gram)
	if err != nil {
		return nil, err
	}
	if !(lip > 0) {
		return nil, errors.New("tsc: NewEncoder: the dictionary is zero")
	}

	dt := tproduct.NewTensor(r, m, k)
	tproduct.Transpose(dt, d)
	gt := tproduct.NewTensor(r, r, k)
	tproduct.Product(gt, dt, d)
	e.g = gt.Data
	e.d2, e.doff = doubledColumns(d.Data, m, r, k)

	e.momentum = make([]float64, min(opt.MaxIter, momentumTable))
	t := 1.0
	for p := range e.momentum {
		tn := nextT(t)
		e.momentum[p] = (t - 1) / tn
		t = tn
	}
	e.tEnd = t

	e.cmat = tproduct.NewSliceMats(k, r, m)
	e.amat = tproduct.NewSliceMats(k, r, r)
	e.setLipschitz(lip)

	// Cost model of the two evaluations, in multiply-adds of the sparse
	// accumulation: a dense step is a matrix product per frequency slice
	// (tproduct.GemmCost per multiply-add) and two transforms of R tubes.
	var macs, reconMACs float64
	for l := range tproduct.Stored(k) {
		_, wr := tproduct.SplitOffset(l, k, r)
		_, wm := tproduct.SplitOffset(l, k, m)
		macs += float64(wr * wr)
		reconMACs += float64(wm * wr)
	}
	e.denseCost = tproduct.GemmCost*macs + tproduct.DFTCost*float64(r*k)*2
	e.denseRecon = tproduct.GemmCost*reconMACs + tproduct.DFTCost*float64((r+m)*k)
	return e, nil
}

// momentumTable bounds the momentum weights that NewEncoder computes in
// advance; longer runs compute the rest as they go.
const momentumTable = 4096

// nextT returns t_{p+1} = (1+√(1+4t_p²))/2 of FISTA's momentum.
func nextT(t float64) float64 {
	return (1 + math.Sqrt(1+4*t*t)) / 2
}

// weights walks the momentum weights (t_p − 1)/t_{p+1} of iterations p,
// p+1, …: from the Encoder's table, and past its end by the recurrence,
// with the same values as the recurrence from t_1 = 1.
type weights struct {
	table []float64
	tEnd  float64
	p     int     // the iteration whose weight is next
	t     float64 // t_p, once p is past the table
}

// firstWeight returns the weights from iteration 1.
func (e *Encoder) firstWeight() weights {
	return weights{table: e.momentum, tEnd: e.tEnd, p: 1}
}

// weight returns the momentum weight of iteration w.p.
func (w *weights) weight() float64 {
	if w.p <= len(w.table) {
		return w.table[w.p-1]
	}
	return (w.t - 1) / nextT(w.t)
}

// next moves on to iteration w.p+1.
func (w *weights) next() {
	switch {
	case w.p == len(w.table):
		w.t = w.tEnd
	case w.p > len(w.table):
		w.t = nextT(w.t)
	}
	w.p++
}

// doubledColumns returns, for the rows×cols×k tensor data, the columns
// repeated twice along the tubes (column q at [q·2k·rows, (q+1)·2k·rows))
// and for every element (q, t) the start of the k·rows run holding
// column q shifted by t: element s of the run is the tube entry (s−t) mod k.
func doubledColumns(data []float64, rows, cols, k int) ([]float64, []int32) {
	blk := rows * k
	d2 := make([]float64, 2*blk*cols)
	off := make([]int32, cols*k)
	for q := range cols {
		col := data[q*blk : (q+1)*blk]
		copy(d2[2*q*blk:], col)
		copy(d2[(2*q+1)*blk:], col)
		for t := range k {
			off[t*cols+q] = int32(2*q*blk + (k-t)*rows)
		}
	}
	return d2, off
}

// setLipschitz sets the step 1/L and the threshold β/L, and everything
// derived from them. NewEncoder uses the exact L; tests use others.
func (e *Encoder) setLipschitz(lip float64) {
	e.lip = lip
	e.tau = e.opt.Beta / lip
	for i, v := range e.dh.Data {
		e.cmat.Data[i] = v / lip
	}
	for l := range tproduct.Stored(e.k) {
		g, w, _ := e.gram.Mat(l)
		a, _, _ := e.amat.Mat(l)
		for i := range w {
			for j := range w {
				a[i*w+j] = -g[i*w+j] / lip
			}
			a[i*w+i]++
		}
	}
	a := make([]float64, len(e.g))
	for i, v := range e.g {
		a[i] = -v / lip
	}
	// The identity tensor is I in its first frontal slice.
	for q := range e.r {
		a[(q*e.k)*e.r+q]++
	}
	e.a2, e.aoff = doubledColumns(a, e.r, e.r, e.k)
	e.offPos = offDiagonal(a, e.r, e.k)
	e.reach = reachFrac * e.tau
	e.closeReach = e.reach / closeRatio
	e.tauBits = math.Float64bits(e.tau)
	e.nearBits = math.Float64bits(e.tau - e.reach)
	e.closeBits = math.Float64bits(e.tau - e.closeReach)
}

// Workspace is the scratch space of Encode and Reconstruct for batches of up
// to a fixed number of patches. A workspace must not be used by two
// goroutines at once.
type Workspace struct {
	m, r, k, n int
	fx         []float64 // n×(M·K): split spectra of patches (or reconstructions)
	cp         []float64 // R×n×K: C/L = D†*X/L, Tensor layout
	fy         []float64 // n×(R·K): split spectra of momentum points (or codes)
	fz         []float64 // n×(R·K): split spectra of A*Y (or of C/L)
	w          []float64 // one lateral slice of R×K (or M×K): a step or a tube run
	above      []int32   // R·K slots: the positions i of a step with |w[i]| > β/L
	idx        []int32   // per patch, R·K slots: positions t·R+q of the non-zeros of Y
	val        []float64 // per patch, R·K slots: their values
	nnz        []int32   // per patch: the number of non-zeros of Y
	sup        []int32   // per patch, R·K slots: positions of the non-zeros of B
	nsup       []int32   // per patch: their number
	iters      []int32   // per patch: the iterations done
	act        []int32   // the patches still iterating
	anc        anchor    // the near steps of the patch running on its own
}

// NewWorkspace returns the scratch space for batches of up to n patches. It
// panics if n < 1.
func (e *Encoder) NewWorkspace(n int) *Workspace {
	if n < 1 {
		panic(fmt.Sprintf("tsc: workspace for %d patches", n))
	}
	rk, mk := e.r*e.k, e.m*e.k
	return &Workspace{
		m: e.m, r: e.r, k: e.k, n: n,
		fx:    make([]float64, n*mk),
		cp:    make([]float64, n*rk),
		fy:    make([]float64, n*rk),
		fz:    make([]float64, n*rk),
		w:     make([]float64, max(rk, mk)),
		above: make([]int32, rk),
		idx:   make([]int32, n*rk),
		val:   make([]float64, n*rk),
		nnz:   make([]int32, n),
		sup:   make([]int32, n*rk),
		nsup:  make([]int32, n),
		iters: make([]int32, n),
		act:   make([]int32, 0, n),
		anc:   newAnchor(rk),
	}
}

// checkBatch panics unless ws, the codes b (R×n×K) and the patches x
// (M×n×K, x may be nil) fit the encoder.
func (e *Encoder) checkBatch(op string, ws *Workspace, b, x *tproduct.Tensor) {
	if ws.m != e.m || ws.r != e.r || ws.k != e.k {
		panic(fmt.Sprintf("tsc: %s: workspace of another geometry", op))
	}
	if b.M != e.r || b.K != e.k {
		panic(fmt.Sprintf("tsc: %s: codes %d×%d×%d, want %d×n×%d", op, b.M, b.N, b.K, e.r, e.k))
	}
	if x != nil && (x.M != e.m || x.K != e.k || x.N != b.N) {
		panic(fmt.Sprintf("tsc: %s: patches %d×%d×%d, want %d×%d×%d", op, x.M, x.N, x.K, e.m, b.N, e.k))
	}
	if b.N > ws.n {
		panic(fmt.Sprintf("tsc: %s: %d patches for a workspace of %d", op, b.N, ws.n))
	}
}

// Encode codes the patches x (M×n×K) into b (R×n×K), n no more than the
// workspace was made for. With
// warm, b holds the starting point B_0 (warm start); otherwise B_0 = 0. Each
// patch runs until MaxIter iterations or its Tol criterion; Encode returns
// the largest number of iterations done by a patch. It allocates nothing and
// panics if the sizes do not fit the encoder and the workspace.
func (e *Encoder) Encode(ws *Workspace, b, x *tproduct.Tensor, warm bool) int {
	e.checkBatch("Encode", ws, b, x)
	n, rk := x.N, e.r*e.k
	e.correlate(ws, x)

	ws.act = ws.act[:0]
	for j := range n {
		bj := b.Lateral(j)
		cnt := 0
		if warm {
			idx, val, sup := ws.idx[j*rk:(j+1)*rk], ws.val[j*rk:(j+1)*rk], ws.sup[j*rk:(j+1)*rk]
			for i, v := range bj {
				if v != 0 {
					idx[cnt], val[cnt], sup[cnt] = int32(i), v, int32(i)
					cnt++
				}
			}
		} else {
			clear(bj)
		}
		ws.nnz[j], ws.nsup[j] = int32(cnt), int32(cnt)
		ws.iters[j] = 0
		ws.act = append(ws.act, int32(j))
	}

	for wt := e.firstWeight(); wt.p <= e.opt.MaxIter && len(ws.act) > 0; wt.next() {
		it := wt.p
		sparse := e.sparseNext(ws)
		if sparse && it > 1 && e.path != pathFull {
			for _, j := range ws.act {
				e.finish(ws, b, j, wt)
			}
			ws.act = ws.act[:0]
			break
		}
		om := wt.weight()
		if sparse {
			ws.act = e.sparseStep(ws, b, om, int32(it))
		} else {
			ws.act = e.denseStep(ws, b, om, int32(it))
		}
	}
	done := 0
	for _, it := range ws.iters[:n] {
		done = max(done, int(it))
	}
	return done
}

// correlate sets ws.cp to C/L = D†*X/L for the patches x, through the
// Fourier domain (Ĉ^(ℓ) = D̂^(ℓ)ᴴX̂^(ℓ)).
func (e *Encoder) correlate(ws *Workspace, x *tproduct.Tensor) {
	n, rk := x.N, e.r*e.k
	tproduct.ForwardBlocks(e.dft, ws.fx, x)
	tproduct.ApplySlices(&e.cmat, ws.fz, ws.fx, n)
	for j := range n {
		e.dft.InverseRows(ws.cp[j*rk:(j+1)*rk], e.r, ws.fz[j*rk:(j+1)*rk], e.r, e.r)
	}
}

// sparseNext reports whether the next gradient step is evaluated sparsely.
func (e *Encoder) sparseNext(ws *Workspace) bool {
	switch e.path {
	case pathDense:
		return false
	case pathSparse, pathFull:
		return true
	}
	var nnz int
	for _, j := range ws.act {
		nnz += int(ws.nnz[j])
	}
	return float64(nnz)*float64(e.r*e.k) < float64(len(ws.act))*e.denseCost
}

// sparseStep does one FISTA iteration of the active patches with full
// steps of the sparse evaluation, and returns the patches that go on.
func (e *Encoder) sparseStep(ws *Workspace, b *tproduct.Tensor, om float64, it int32) []int32 {
	keep := ws.act[:0]
	for _, j := range ws.act {
		step, na := e.fullStep(ws, j, false)
		if e.proxStep(ws, b, j, step, ws.above[:na], om, it) {
			keep = append(keep, j)
		}
	}
	return keep
}

// fullStep computes the whole gradient step of patch j with the sparse
// evaluation and returns it with the number of positions above β/L,
// listed in ws.above (increasing). With anchor, it also records the step
// as the anchor of the near steps that follow (the patch runs on its own).
func (e *Encoder) fullStep(ws *Workspace, j int32, anchor bool) ([]float64, int) {
	rk := e.r * e.k
	lo, hi := int(j)*rk, int(j+1)*rk
	cnt := int(ws.nnz[j])
	idx, val := ws.idx[lo:lo+cnt], ws.val[lo:lo+cnt]
	list, tb := ws.above, e.tauBits
	if anchor {
		list, tb = ws.anc.wide, e.nearBits
	}
	step := ws.cp[lo:hi]
	var nl int
	if cnt > 0 || ws.nsup[j] > 0 {
		nl = accumulate(ws.w[:rk], step, e.a2, e.aoff, idx, val, tb, list)
		step = ws.w[:rk]
	} else {
		// With Y_p = 0 and B_{p−1} = 0 the step is C/L itself, which
		// proxStep then only reads.
		nl = aboveList(list, step, tb)
	}
	if !anchor {
		return step, nl
	}
	return step, e.setAnchor(ws, step, nl, idx, val)
}

// denseStep does one FISTA iteration of the active patches with the
// Fourier-domain gradient step, and returns the patches that go on.
func (e *Encoder) denseStep(ws *Workspace, b *tproduct.Tensor, om float64, it int32) []int32 {
	rk := e.r * e.k
	w := ws.w[:rk]
	tb := math.Float64bits(e.tau)
	for a, j := range ws.act {
		lo := int(j) * rk
		clear(w)
		for s, i := range ws.idx[lo : lo+int(ws.nnz[j])] {
			w[i] = ws.val[lo+s]
		}
		e.dft.ForwardRows(ws.fy[a*rk:(a+1)*rk], e.r, w, e.r, e.r)
	}
	tproduct.ApplySlices(&e.amat, ws.fz, ws.fy, len(ws.act))
	keep := ws.act[:0]
	for a, j := range ws.act {
		e.dft.InverseRows(w, e.r, ws.fz[a*rk:(a+1)*rk], e.r, e.r)
		cp := ws.cp[int(j)*rk : int(j+1)*rk]
		cp = cp[:len(w)]
		for i := range w {
			w[i] += cp[i]
		}
		na := aboveList(ws.above, w, tb)
		if e.proxStep(ws, b, j, w, ws.above[:na], om, it) {
			keep = append(keep, j)
		}
	}
	return keep
}

// accumulate sets w to src + Σ_s val[s]·tab[off[idx[s]]:][:len(w)] (src
// may be w): for every non-zero (position idx[s] = t·R+q, value val[s]) the
// shifted column q of a doubled time-domain tproduct. Four runs go in per pass
// over w, then two, then one; each pass adds the sum of its runs to w, in
// this order whatever the caller. The first pass reads src instead of w, so
// a gradient step needs no copy of C/L first: most patches of a denoising
// run have one or two non-zeros, and a pass costs little more than a copy.
//
// With a non-nil above, the last pass also lists there the positions i
// with |w[i]| > τ (see aboveList; tb is the bit pattern of τ), in
// increasing order, and accumulate returns their number: the test on a
// value already in a register replaces a second pass over w.
func accumulate(w, src, tab []float64, off []int32, idx []int32, val []float64, tb uint64, above []int32) int {
	n := len(w)
	// last is the start of the last pass, the one with the test.
	last := len(idx)
	switch {
	case above == nil:
	case len(idx)%2 == 1:
		last = len(idx) - 1
	case len(idx)%4 == 2:
		last = len(idx) - 2
	default:
		last = len(idx) - 4
	}
	s := 0
	for ; s+4 <= len(idx); s += 4 {
		o0, o1, o2, o3 := off[idx[s]], off[idx[s+1]], off[idx[s+2]], off[idx[s+3]]
		g0, g1, g2, g3 := tab[o0:int(o0)+n], tab[o1:int(o1)+n], tab[o2:int(o2)+n], tab[o3:int(o3)+n]
		v0, v1, v2, v3 := val[s], val[s+1], val[s+2], val[s+3]
		if s == last {
			return kernel.Add4Above(w, src, g0, g1, g2, g3, v0, v1, v2, v3, tb, above)
		}
		kernel.Add4(w, src, g0, g1, g2, g3, v0, v1, v2, v3)
		src = w
	}
	if s+2 <= len(idx) {
		o0, o1 := off[idx[s]], off[idx[s+1]]
		g0, g1 := tab[o0:int(o0)+n], tab[o1:int(o1)+n]
		if s == last {
			return kernel.Add2Above(w, src, g0, g1, val[s], val[s+1], tb, above)
		}
		kernel.Add2(w, src, g0, g1, val[s], val[s+1])
		src = w
		s += 2
	}
	if s < len(idx) {
		o := off[idx[s]]
		g := tab[o : int(o)+n]
		if s == last {
			return kernel.Add1Above(w, src, g, val[s], tb, above)
		}
		kernel.Add1(w, src, g, val[s])
		return 0
	}
	// No runs at all.
	copy(w, src)
	if above == nil {
		return 0
	}
	return aboveList(above, w, tb)
}

// signMask clears the sign bit of a float64 bit pattern.
const signMask = 1<<63 - 1

// aboveList writes to above the positions i with |w[i]| > τ, in increasing
// order, and returns their number; tb is the bit pattern of τ ≥ 0. For
// non-negative floats the order of the bit patterns is that of the values,
// and masking the sign bit is cheaper than math.Abs; a NaN counts as above
// (softThreshold turns it into a zero).
func aboveList(above []int32, w []float64, tb uint64) int {
	above = above[:len(w)]
	k := 0
	for i, v := range w {
		// Every position is written and the count moves on by
		// isAbove(v): no branch to mispredict.
		above[k] = int32(i)
		k += isAbove(v, tb)
	}
	return k
}

// isAbove returns 1 if |v| > τ (or v is a NaN) and 0 otherwise, without a
// branch; tb is the bit pattern of τ ≥ 0. Both bit patterns are below
// 2⁶³, so tb − |v| wraps to a number with its top bit set exactly when
// |v| is the larger.
func isAbove(v float64, tb uint64) int {
	return int((tb - math.Float64bits(v)&signMask) >> 63)
}

// proxStep finishes iteration it of patch j from its gradient step w:
// B_p = Prox_{β/L}(w) into b, the support of B_p and the non-zeros of the
// next momentum point Y_{p+1} = B_p + om·(B_p − B_{p−1}) into the patch's
// slots, and the stopping test. It reports whether the patch goes on.
//
// The entries on the support of B_{p−1} are done first, from its list, and
// cleared in w (w is written only when that support is not empty); the
// remaining ones have B_{p−1} = 0 and change only where |w| > β/L: at the
// positions in above (increasing), listed as w was computed (accumulate,
// aboveList). A listed position on the support of B_{p−1} now holds 0 in w
// and is skipped.
//
// A patch with Y_p = 0 and B_{p−1} = B_p = 0 is at a fixed point: every
// later iteration repeats the same step from the same zeros. It stops
// there; under Tol = 0 it counts as having run MaxIter iterations.
func (e *Encoder) proxStep(ws *Workspace, b *tproduct.Tensor, j int32, w []float64, above []int32, om float64, it int32) bool {
	rk := e.r * e.k
	bj := b.Lateral(int(j))
	bj = bj[:len(w)]
	lo := int(j) * rk
	idx, val, sup := ws.idx[lo:lo+rk], ws.val[lo:lo+rk], ws.sup[lo:lo+rk]
	idx, val, sup = idx[:len(w)], val[:len(w)], sup[:len(w)]
	tau := e.tau
	wasZero := ws.nnz[j] == 0 && ws.nsup[j] == 0
	cnt, ns := 0, 0
	var diff2, norm2 float64
	for _, i := range sup[:ws.nsup[j]] {
		v := w[i]
		w[i] = 0
		bn := softThreshold(v, tau)
		bo := bj[i]
		bj[i] = bn
		d := bn - bo
		diff2 += float64(d * d)
		norm2 += float64(bn * bn)
		if bn != 0 {
			sup[ns] = i
			ns++
		}
		if y := bn + float64(om*d); y != 0 {
			idx[cnt], val[cnt] = i, y
			cnt++
		}
	}
	grow := 1 + om
	for _, i := range above {
		bn := softThreshold(w[i], tau)
		if bn == 0 {
			continue
		}
		bj[i] = bn
		diff2 += float64(bn * bn)
		norm2 += float64(bn * bn)
		sup[ns] = i
		ns++
		idx[cnt], val[cnt] = i, grow*bn
		cnt++
	}
	ws.nsup[j] = int32(ns)
	ws.nnz[j] = int32(cnt)
	ws.iters[j] = it
	tol := e.opt.Tol
	if wasZero && ns == 0 {
		if tol == 0 {
			ws.iters[j] = int32(e.opt.MaxIter)
		}
		return false
	}
	return !(tol > 0 && diff2 <= tol*tol*norm2)
}

// softThreshold returns Prox_τ(v) = sign(v)·max(|v| − τ, 0).
func softThreshold(v, tau float64) float64 {
	switch {
	case v > tau:
		return v - tau
	case v < -tau:
		return v + tau
	}
	return 0
}

// Reconstruct sets dst (M×n×K) = D * b for the codes b (R×n×K), n no more
// than the workspace was made for: time-domain accumulation over the non-zeros of b when they
// are few, one Fourier product per frequency slice otherwise. It allocates
// nothing and panics if the sizes do not fit.
func (e *Encoder) Reconstruct(ws *Workspace, dst, b *tproduct.Tensor) {
	e.checkBatch("Reconstruct", ws, b, nil)
	if dst.M != e.m || dst.N != b.N || dst.K != e.k {
		panic(fmt.Sprintf("tsc: Reconstruct into %d×%d×%d, want %d×%d×%d", dst.M, dst.N, dst.K, e.m, b.N, e.k))
	}
	n := b.N
	sparse := e.path == pathSparse
	if e.path == pathAuto {
		var nnz int
		for _, v := range b.Data[:n*e.r*e.k] {
			if v != 0 {
				nnz++
			}
		}
		sparse = float64(nnz)*float64(e.m*e.k) < float64(n)*e.denseRecon
	}
	if !sparse {
		tproduct.ForwardBlocks(e.dft, ws.fy, b)
		tproduct.ApplySlices(&e.dmat, ws.fx, ws.fy, n)
		tproduct.InverseBlocks(e.dft, dst, ws.fx)
		return
	}
	rk := e.r * e.k
	for j := range n {
		idx, val := ws.idx[:rk], ws.val[:rk]
		cnt := 0
		for i, v := range b.Lateral(j) {
			if v != 0 {
				idx[cnt], val[cnt] = int32(i), v
				cnt++
			}
		}
		dj := dst.Lateral(j)
		clear(dj)
		accumulate(dj, dj, e.d2, e.doff, idx[:cnt], val[:cnt], 0, nil)
	}
}
