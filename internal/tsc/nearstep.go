package tsc

import (
	"math"
	"slices"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/tsc/internal/kernel"
)

// Near steps of the sparse evaluation.
//
// A gradient step w = C/L + A*Y_p (A = I − D†*D/L) decides the code only
// where |w_i| > τ = β/L; everywhere else the code is zero. Codes of patches
// are a few per cent dense and FISTA's momentum points settle within a
// few iterations, so most of a full step is spent on values that end up
// below τ. A near step computes w only where it can reach τ.
//
// After a full step at iteration q (w computed everywhere from Y_q, the
// anchor), the positions with |w_i| > τ − h, and those of the non-zeros
// of Y_q, are near; the positions with |w_i| > τ − h/closeRatio, and those
// of Y_q, are close. At a later iteration p, let U hold the positions of
// the non-zeros of Y_p and Y_q. A position i outside U has
//
//	|w_i(Y_p) − w_i(Y_q)| = |Σ_{s∈U} A_is (Y_p − Y_q)_s| ≤ Σ_{s∈U} a_s |(Y_p − Y_q)_s|
//
// with A_is the entries of the block-circulant circ(A) and a_s the largest
// |A_is| over i ≠ s: the largest entry of the lateral slice of A of the
// atom of s, its (s, s) entry (1 − ‖D(:,s,:)‖²/L) left out. That entry is
// most of A, the others are correlations of distinct or shifted atoms,
// divided by L (a twentieth to a tenth of the diagonal on the paper's
// setting), so the bound is tight. With δ = Σ_{s∈U} a_s|(Y_p − Y_q)_s| + μ:
// if every position of U is near and δ < h, every position that is not
// near stays below τ: its code is zero, and so was it at iterations q..p−1 (by the
// same argument), so it is not on the support of B_{p−1} either. The near
// step computes w at the near positions only (at the close ones if they
// hold U and δ < h/closeRatio), with the same sums in the same order as
// the full step (accumulateAt); the codes, the support and the next
// momentum point are then exactly those of a full step. Otherwise the
// step is full and Y_p becomes the anchor.
//
// μ covers the rounding of both computed steps, of δ and of τ − h: each
// computed w_i is its exact value (from the stored C/L and A) up to
// (RK+1)·2⁻⁵³ times |C_i| + Σ|Y_s||A_is| ≤ max|C/L| + ‖Y‖₁ (|A_is| ≤ 1,
// as ‖circ(A)‖₂ ≤ 1), so
//
//	μ = 8(RK+4)·2⁻⁵³·(max|C/L| + ‖Y_q‖₁ + ‖Y_p‖₁ + τ)
//
// is at least twice what those roundings can add up to: a position whose
// full step would put it above τ is always computed.
//
// When the momentum point settles on the close positions while the anchor
// is elsewhere, the anchor moves there without a full step: the reaches
// shrink by the δ of the move (the bounds add up along the way).
//
// Once FISTA has settled on a support, the momentum point, the support
// and the anchor hold the same positions, and runSettled makes the close
// steps from compact runs of A, with the proximal step fused, until
// something changes.
//
// The constants were set on the paper's setting (BenchmarkEncodePaper,
// docs/results.md).
const (
	reachFrac  = 0.15 // h = reachFrac·β/L
	closeRatio = 2
	// A step that could compute the near positions (U near, h/closeRatio ≤
	// δ < h) is made full instead when δ has changed by less than
	// settleFrac·h/closeRatio since the previous step: FISTA has settled
	// away from the anchor, and a full step anchors where it has settled.
	settleFrac = 0.5
	// settledRows bounds the compact runs of runSettled (close positions
	// times support size), in multiples of R·K.
	settledRows = 4
)

// The marks of the positions in anchor.listed.
const (
	notListed uint8 = iota
	listedNear
	listedClose // close, and so near too
)

// anchor holds the state of the near steps of the patch that runs on its
// own: the positions of its last full step that are near or close, and
// what the distance of later momentum points to the anchor needs.
type anchor struct {
	set    bool      // whether a full step has been recorded since the patch started
	near   []int32   // R·K slots: the near positions, increasing
	nnear  int       // their number
	close  []int32   // R·K slots: the close positions, increasing
	nclose int       // their number
	listed []uint8   // R·K marks: whether each position is close, near or neither
	idx    []int32   // R·K slots: positions of the non-zeros of the anchor Y_q
	val    []float64 // R·K slots: their values
	n      int       // their number
	l1     float64   // ‖Y_q‖₁
	cmax   float64   // the largest |C/L| of the patch
	delta  float64   // δ of the previous step
	// The reaches h and h/closeRatio of the anchor, less the distance it
	// has moved since its full step.
	reach, closeReach float64
	mark              []float64 // R·K values, zero between uses: Y_q scattered for a distance
	runs              []int32   // R·K slots: the starts of the runs of a near step
	wide              []int32   // R·K slots: the positions of a full step above τ − h
	merge             []int32   // R·K slots: the anchor's positions not above τ − h, sorted

	// The settled steps (runSettled), over the close positions c and the
	// support s.
	rows   []float64 // settledRows·R·K slots: A(close[c], S[s]) at c·|S| + s
	cc     []float64 // R·K slots: C/L at the close positions
	wc     []float64 // R·K slots: the step at the close positions
	onSup  []bool    // R·K slots: whether close position c is on the support
	at     []int32   // R·K slots: the index c of S[s]
	off    []float64 // R·K slots: a_s of S[s]
	rest   []int32   // R·K slots: the close positions c off the support
	y, bo  []float64 // R·K slots: Y_p and B_{p−1} on the support
	yn, bn []float64 // R·K slots: Y_{p+1} and B_p on the support

	// The steps made since the workspace was made, for tests and
	// benchmarks.
	fullSteps, nearSteps, settledSteps int
}

func newAnchor(rk int) anchor {
	return anchor{
		near:   make([]int32, rk),
		close:  make([]int32, rk),
		listed: make([]uint8, rk),
		idx:    make([]int32, rk),
		val:    make([]float64, rk),
		mark:   make([]float64, rk),
		runs:   make([]int32, rk),
		wide:   make([]int32, rk),
		merge:  make([]int32, rk),
		rows:   make([]float64, settledRows*rk),
		cc:     make([]float64, rk),
		wc:     make([]float64, rk),
		onSup:  make([]bool, rk),
		at:     make([]int32, rk),
		off:    make([]float64, rk),
		y:      make([]float64, rk),
		bo:     make([]float64, rk),
		yn:     make([]float64, rk),
		bn:     make([]float64, rk),
		rest:   make([]int32, 0, rk),
	}
}

// offDiagonal returns a_s for every position s = t·R + q of a code, for
// the R×R×K tensor a (Tensor layout): the largest |A(i, q, t)| over its
// lateral slice q, A(q, q, 0) left out.
func offDiagonal(a []float64, r, k int) []float64 {
	off := make([]float64, r*k)
	for q := range r {
		var m float64
		for t := range k {
			for i, v := range a[(q*k+t)*r : (q*k+t+1)*r] {
				if i != q || t != 0 {
					m = max(m, math.Abs(v))
				}
			}
		}
		for t := range k {
			off[t*r+q] = m
		}
	}
	return off
}

// finish runs the iterations wt.p..MaxIter of patch j on its own with the
// sparse evaluation, until the patch stops (proxStep).
func (e *Encoder) finish(ws *Workspace, b *tproduct.Tensor, j int32, wt weights) {
	rk := e.r * e.k
	lo := int(j) * rk
	cp := ws.cp[lo : lo+rk]
	a := &ws.anc
	a.set = false
	// The largest |C/L| by the bit patterns (a NaN is larger than any
	// number, and makes every later distance NaN, so every step full).
	var cmax uint64
	for _, v := range cp {
		cmax = max(cmax, math.Float64bits(v)&signMask)
	}
	a.cmax = math.Float64frombits(cmax)
	for ; wt.p <= e.opt.MaxIter; wt.next() {
		if e.aligned(ws, j) {
			if e.runSettled(ws, b, j, &wt) || wt.p > e.opt.MaxIter {
				return
			}
		}
		it, om := wt.p, wt.weight()
		var step []float64
		var na int
		if list := e.nearList(ws, j); list != nil {
			cnt := int(ws.nnz[j])
			step = ws.w[:rk]
			na = accumulateAt(step, cp, e.a2, e.aoff, ws.idx[lo:lo+cnt], ws.val[lo:lo+cnt], list, e.tauBits, ws.above, a.runs)
			a.nearSteps++
		} else {
			step, na = e.fullStep(ws, j, true)
			a.fullSteps++
		}
		if !e.proxStep(ws, b, j, step, ws.above[:na], om, int32(it)) {
			return
		}
	}
}

// roundingMargin returns μ/(max|C/L| + ‖Y_q‖₁ + ‖Y_p‖₁ + τ), 8(RK+4)·2⁻⁵³.
func (e *Encoder) roundingMargin() float64 {
	return 8 * float64(e.r*e.k+4) * 0x1p-53
}

// nearList returns the positions that the next step of patch j must
// compute: the close positions of the anchor if they hold U and
// δ < h/closeRatio, the near ones if they hold U, δ < h and Y is still
// moving, and nil for a full step.
func (e *Encoder) nearList(ws *Workspace, j int32) []int32 {
	a := &ws.anc
	if !a.set {
		return nil
	}
	lo := int(j) * e.r * e.k
	cnt := int(ws.nnz[j])
	idx, val := ws.idx[lo:lo+cnt], ws.val[lo:lo+cnt]
	anc, ancv := a.idx[:a.n], a.val[:a.n]
	mark := a.mark
	for s, i := range anc {
		mark[i] = ancv[s]
	}
	var dist, l1 float64
	// The narrowest list that holds every position of Y_p (those of Y_q
	// are close).
	level := listedClose
	for s, i := range idx {
		v := val[s]
		l1 += math.Abs(v)
		dist += e.offPos[i] * math.Abs(v-mark[i])
		mark[i] = 0
		level = min(level, a.listed[i])
	}
	// What is left in mark is the anchor where Y_p is zero.
	for _, i := range anc {
		dist += e.offPos[i] * math.Abs(mark[i])
		mark[i] = 0
	}
	delta := dist + e.roundingMargin()*(a.cmax+a.l1+l1+e.tau)
	last := a.delta
	a.delta = delta
	switch {
	case level == listedClose && delta < a.closeReach:
		// A settled support with the anchor elsewhere: the anchor moves
		// to Y_p, and the reaches shrink by δ, so that the settled steps
		// can follow.
		if sup := ws.sup[lo : lo+int(ws.nsup[j])]; slices.Equal(idx, sup) && !slices.Equal(anc, sup) {
			a.reach -= delta
			a.closeReach -= delta
			a.n = copy(a.idx, idx)
			copy(a.val, val)
			a.l1 = l1
			a.delta = 0
		}
		return a.close[:a.nclose]
	case level >= listedNear && delta < a.reach && math.Abs(delta-last) >= settleFrac*e.closeReach:
		return a.near[:a.nnear]
	}
	return nil
}

// setAnchor records the full step w, computed from the momentum point
// with the non-zeros idx, val, as the anchor; the positions with |w_i| >
// τ − h, nl of them, are listed in ws.anc.wide. It lists the positions
// above τ in ws.above, increasing, and returns their number.
func (e *Encoder) setAnchor(ws *Workspace, w []float64, nl int, idx []int32, val []float64) int {
	a := &ws.anc
	// The marks of the last anchor, of this patch or of the one before.
	for _, i := range a.near[:a.nnear] {
		a.listed[i] = notListed
	}
	// The positions above τ − h, and those of Y_q that are not (a few
	// at most, sorted and merged in).
	wide := a.wide[:nl]
	for _, i := range wide {
		a.listed[i] = listedNear
	}
	extra := a.merge[:0]
	for _, i := range idx {
		if a.listed[i] == notListed {
			extra = append(extra, i)
		}
		a.listed[i] = listedClose
	}
	if len(extra) == 0 {
		a.near, a.wide = a.wide, a.near
		a.nnear = nl
	} else {
		slices.Sort(extra)
		out := a.near[:0]
		for len(wide) > 0 || len(extra) > 0 {
			if len(extra) == 0 || len(wide) > 0 && wide[0] < extra[0] {
				out = append(out, wide[0])
				wide = wide[1:]
			} else {
				out = append(out, extra[0])
				extra = extra[1:]
			}
		}
		a.nnear = len(out)
	}
	na, nc := 0, 0
	for _, i := range a.near[:a.nnear] {
		v := w[i]
		c := isAbove(v, e.closeBits)
		if a.listed[i] == listedClose {
			c = 1
		}
		a.close[nc] = i
		nc += c
		a.listed[i] = listedNear + uint8(c)
		ws.above[na] = i
		na += isAbove(v, e.tauBits)
	}
	a.set = true
	a.nclose = nc
	a.n = copy(a.idx, idx)
	copy(a.val, val)
	a.l1 = 0
	for _, v := range val {
		a.l1 += math.Abs(v)
	}
	a.delta = 0
	a.reach, a.closeReach = e.reach, e.closeReach
	return na
}

// accumulateAt is accumulate (with a list) at the positions at only,
// increasing: it sets w[i] for i in at to what accumulate sets it to, bit
// for bit (the same runs in the same groups of four, two and one, each
// group's products rounded and added left to right, then added to w[i]),
// lists in above the positions of at with |w[i]| > τ in increasing order,
// and returns their number. The other values of w are left as they were.
// runs is scratch space for len(idx) values.
//
// The explicit conversions round every product and partial sum as the
// kernels do, so that no compiler fuses them into multiply-adds.
func accumulateAt(w, src, tab []float64, off []int32, idx []int32, val []float64, at []int32, tb uint64, above []int32, runs []int32) int {
	runs = runs[:len(idx)]
	for s, p := range idx {
		runs[s] = off[p]
	}
	val = val[:len(runs)]
	fours := len(runs) &^ 3
	na := 0
	for _, i := range at {
		x := src[i]
		s := 0
		for ; s < fours; s += 4 {
			r := runs[s : s+4 : s+4]
			v := val[s : s+4 : s+4]
			x += float64(float64(float64(v[0]*tab[int(r[0])+int(i)])+float64(v[1]*tab[int(r[1])+int(i)]))+float64(v[2]*tab[int(r[2])+int(i)])) +
				float64(v[3]*tab[int(r[3])+int(i)])
		}
		if s+2 <= len(runs) {
			x += float64(val[s]*tab[int(runs[s])+int(i)]) + float64(val[s+1]*tab[int(runs[s+1])+int(i)])
			s += 2
		}
		if s < len(runs) {
			x += float64(val[s] * tab[int(runs[s])+int(i)])
		}
		w[i] = x
		if math.Float64bits(x)&signMask > tb {
			above[na] = i
			na++
		}
	}
	return na
}

// aligned reports whether patch j has an anchor and its momentum point,
// the support of its codes and the anchor have the same non-empty list
// of positions, in the same order: FISTA has settled on a support, and
// runSettled can take over.
func (e *Encoder) aligned(ws *Workspace, j int32) bool {
	a := &ws.anc
	lo := int(j) * e.r * e.k
	ns := int(ws.nsup[j])
	if !a.set || ns == 0 || int(ws.nnz[j]) != ns || a.n != ns {
		return false
	}
	sup := ws.sup[lo : lo+ns]
	return slices.Equal(ws.idx[lo:lo+ns], sup) && slices.Equal(a.idx[:ns], sup)
}

// runSettled runs iterations wt.p, wt.p+1, … of the aligned patch j
// as close steps on the settled support S: the step at the close positions
// from compact runs of A (the same products and sums as accumulateAt, so
// the same values bit for bit), then the proximal step and the momentum
// point on S as proxStep makes them. It stops before an iteration that
// would need more: δ ≥ h/closeRatio, a close position off S above β/L, a
// code on S that becomes zero; and after one whose momentum point has a
// zero on S, or that stops the patch (Tol). It writes the codes and the
// momentum point back, leaves wt at the next iteration, and reports
// whether the patch has stopped.
func (e *Encoder) runSettled(ws *Workspace, b *tproduct.Tensor, j int32, wt *weights) bool {
	a := &ws.anc
	rk := e.r * e.k
	lo := int(j) * rk
	ns := int(ws.nsup[j])
	close := a.close[:a.nclose]
	nc := len(close)
	if nc*ns > len(a.rows) {
		return false
	}
	sup := ws.sup[lo : lo+ns]
	bj := b.Lateral(int(j))
	cp := ws.cp[lo : lo+rk]
	// y and bo are Y_p and B_{p−1} on S; yn and bn the next ones, swapped
	// in when an iteration is done.
	y, bo, yn, bn, yq := a.y[:ns], a.bo[:ns], a.yn[:ns], a.bn[:ns], a.val[:ns]
	off := a.off[:ns]
	var l1, dist float64
	for s, i := range sup {
		off[s] = e.offPos[i]
		y[s] = ws.val[lo+s]
		bo[s] = bj[i]
		l1 += math.Abs(y[s])
		dist += off[s] * math.Abs(y[s]-yq[s])
	}
	mu := e.roundingMargin()
	limit := a.closeReach - mu*(a.cmax+a.l1+e.tau)
	if !(dist+mu*l1 < limit) {
		// Not a close step: the caller makes the step, before any runs
		// are cut.
		return false
	}
	// The runs, one per position of S, over the close positions: A(close[c],
	// S[s]) at s·nc + c.
	runs := a.rows[:nc*ns]
	cc, wc, onSup := a.cc[:nc], a.wc[:nc], a.onSup[:nc]
	at := a.at[:ns]
	clear(onSup)
	for s, i := range sup {
		c, found := slices.BinarySearch(close, i)
		if !found {
			// Cannot happen: the support is above β/L, so close.
			return false
		}
		at[s] = int32(c)
		onSup[c] = true
		run := runs[s*nc : (s+1)*nc]
		tab := e.a2[e.aoff[i]:]
		for c, p := range close {
			run[c] = tab[p]
		}
	}
	// The close positions off S, which must stay below β/L.
	rest := a.rest[:0]
	for c, i := range close {
		cc[c] = cp[i]
		if !onSup[c] {
			rest = append(rest, int32(c))
		}
	}
	// The loop reads only locals: the stores into the slices would make
	// the compiler reload anything reached through a pointer.
	tau, tb, tol := e.tau, e.tauBits, e.opt.Tol
	maxIter := e.opt.MaxIter
	it0 := wt.p
	done := false
	for wt.p <= maxIter && dist+mu*l1 < limit {
		settledStep(wc, cc, runs, y)
		// Stop if a close position off S rises above β/L or a code on S
		// becomes zero (flags without branches: the loops stay short).
		leaves := 0
		for _, c := range rest {
			leaves |= isAbove(wc[c], tb)
		}
		for s, c := range at {
			v := softThreshold(wc[c], tau)
			bn[s] = v
			leaves |= isZero(v)
		}
		if leaves != 0 {
			break
		}
		om := wt.weight()
		var diff2, norm2 float64
		l1, dist = 0, 0
		zero := 0
		for s, v := range bn {
			d := v - bo[s]
			diff2 += float64(d * d)
			norm2 += float64(v * v)
			next := v + float64(om*d)
			yn[s] = next
			zero |= isZero(next)
			l1 += math.Abs(next)
			dist += off[s] * math.Abs(next-yq[s])
		}
		y, yn = yn, y
		bo, bn = bn, bo
		wt.next()
		if tol > 0 && diff2 <= tol*tol*norm2 {
			done = true
			break
		}
		if zero != 0 {
			break
		}
	}
	if wt.p > it0 {
		ws.iters[j] = int32(wt.p - 1)
		a.settledSteps += wt.p - it0
	}
	cnt := 0
	for s, i := range sup {
		bj[i] = bo[s]
		if y[s] != 0 {
			ws.idx[lo+cnt], ws.val[lo+cnt] = i, y[s]
			cnt++
		}
	}
	ws.nnz[j] = int32(cnt)
	return done
}

// isZero returns 1 if v is zero (of either sign) and 0 otherwise, without
// a branch: |v| − 1 wraps to a number with its top bit set only for 0.
func isZero(v float64) int {
	return int((math.Float64bits(v)&signMask - 1) >> 63)
}

// settledStep sets w[c] = src[c] + Σ_s y[s]·runs[s·len(w)+c] for every c,
// with the runs grouped and added as accumulate does: fours, then a pair,
// then one, by the same kernels.
func settledStep(w, src, runs, y []float64) {
	n := len(w)
	run := func(s int) []float64 { return runs[s*n : (s+1)*n] }
	in := src[:n]
	s := 0
	for ; s+4 <= len(y); s += 4 {
		kernel.Add4(w, in, run(s), run(s+1), run(s+2), run(s+3), y[s], y[s+1], y[s+2], y[s+3])
		in = w
	}
	if s+2 <= len(y) {
		kernel.Add2(w, in, run(s), run(s+1), y[s], y[s+1])
		in = w
		s += 2
	}
	if s < len(y) {
		kernel.Add1(w, in, run(s), y[s])
	}
	if len(y) == 0 {
		copy(w, src)
	}
}
