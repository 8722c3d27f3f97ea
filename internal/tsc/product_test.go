package tsc

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// tpCirc returns the mk×rk block-circulant matrix of d (M×R×K) of docs/model.md
// §1 (the paper's Lemma 1): block (i, j) is the frontal slice d^((i−j) mod k).
func tpCirc(d *Tensor) *mat.Dense {
	m, r, k := d.M, d.N, d.K
	c := mat.NewDense(m*k, r*k, nil)
	for bi := range k {
		for bj := range k {
			l := ((bi-bj)%k + k) % k
			for i := range m {
				for q := range r {
					c.Set(bi*m+i, bj*r+q, d.At(i, q, l))
				}
			}
		}
	}
	return c
}

// tpUnfold returns unfold(x): the frontal slices of x (M×N×K) stacked
// vertically, an mk×n matrix.
func tpUnfold(x *Tensor) *mat.Dense {
	u := mat.NewDense(x.M*x.K, x.N, nil)
	for t := range x.K {
		for i := range x.M {
			for j := range x.N {
				u.Set(t*x.M+i, j, x.At(i, j, t))
			}
		}
	}
	return u
}

func TestProductMatchesBlockCirculant(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 1))
	for k := 1; k <= 8; k++ {
		for range 3 {
			m, r, n := 1+rng.IntN(7), 1+rng.IntN(7), 1+rng.IntN(6)
			d := tpRandTensor(rng, m, r, k)
			b := tpRandTensor(rng, r, n, k)
			got := NewTensor(m, n, k)
			Product(got, d, b)
			var want mat.Dense
			want.Mul(tpCirc(d), tpUnfold(b))
			if !mat.EqualApprox(tpUnfold(got), &want, 1e-12*float64(r*k)) {
				t.Fatalf("k=%d m=%d r=%d n=%d: D*B differs from circ(D)·unfold(B)", k, m, r, n)
			}
		}
	}
}

func TestProductAliasesOperand(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, k := range []int{3, 4, 5} {
		d := tpRandTensor(rng, 4, 4, k)
		b := tpRandTensor(rng, 4, 3, k)
		want := NewTensor(4, 3, k)
		Product(want, d, b)
		Product(b, d, b)
		for i, v := range want.Data {
			if b.Data[i] != v {
				t.Fatalf("k=%d: Product into its own operand differs at %d: %v, want %v", k, i, b.Data[i], v)
			}
		}
	}
}

func TestTransposeIsAdjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for k := 1; k <= 8; k++ {
		m, r, n := 1+rng.IntN(7), 1+rng.IntN(7), 1+rng.IntN(6)
		d := tpRandTensor(rng, m, r, k)
		b := tpRandTensor(rng, r, n, k)
		x := tpRandTensor(rng, m, n, k)
		db := NewTensor(m, n, k)
		Product(db, d, b)
		dt := NewTensor(r, m, k)
		Transpose(dt, d)
		dtx := NewTensor(r, n, k)
		Product(dtx, dt, x)
		lhs, rhs := Inner(db, x), Inner(b, dtx)
		if math.Abs(lhs-rhs) > 1e-12*math.Sqrt(Norm2(db)*Norm2(x))*float64(k) {
			t.Errorf("k=%d: ⟨D*B, X⟩ = %v, ⟨B, D†*X⟩ = %v", k, lhs, rhs)
		}
		// circ(D†) = circ(D)ᵀ, and the DFT of D† is the slice-wise
		// conjugate transpose of that of D.
		var ct mat.Dense
		ct.CloneFrom(tpCirc(d).T())
		if !mat.Equal(tpCirc(dt), &ct) {
			t.Errorf("k=%d: circ(D†) ≠ circ(D)ᵀ", k)
		}
		p := NewDFT(k)
		fd, fdt := NewFTensor(m, r, k), NewFTensor(r, m, k)
		p.Forward(fd, d)
		p.Forward(fdt, dt)
		for l := range Stored(k) {
			a, h := fd.Slice(l), fdt.Slice(l)
			for i := range m {
				for q := range r {
					z, w := a[i*r+q], h[q*m+i]
					if math.Abs(real(z)-real(w)) > 1e-12*float64(k) || math.Abs(imag(z)+imag(w)) > 1e-12*float64(k) {
						t.Fatalf("k=%d slice %d: (D̂†)(%d,%d) = %v, conj(D̂(%d,%d)) = %v", k, l, q, i, w, i, q, z)
					}
				}
			}
		}
		back := NewTensor(m, r, k)
		Transpose(back, dt)
		for i, v := range d.Data {
			if back.Data[i] != v {
				t.Fatalf("k=%d: (D†)† ≠ D", k)
			}
		}
	}
}

func TestInnerAndNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 4))
	x := tpRandTensor(rng, 3, 5, 7)
	y := tpRandTensor(rng, 3, 5, 7)
	var dot, sq float64
	for i := range x.M {
		for j := range x.N {
			for tt := range x.K {
				dot += x.At(i, j, tt) * y.At(i, j, tt)
				sq += x.At(i, j, tt) * x.At(i, j, tt)
			}
		}
	}
	if got := Inner(x, y); math.Abs(got-dot) > 1e-12*math.Abs(dot)+1e-12 {
		t.Errorf("Inner = %v, want %v", got, dot)
	}
	if got := Norm2(x); math.Abs(got-sq) > 1e-12*sq {
		t.Errorf("Norm2 = %v, want %v", got, sq)
	}
}

func TestProductPanicsOnSizeMismatch(t *testing.T) {
	cases := map[string]func(){
		"inner size": func() { Product(NewTensor(2, 3, 4), NewTensor(2, 5, 4), NewTensor(4, 3, 4)) },
		"tube":       func() { Product(NewTensor(2, 3, 4), NewTensor(2, 5, 4), NewTensor(5, 3, 3)) },
		"dst":        func() { Product(NewTensor(2, 2, 4), NewTensor(2, 5, 4), NewTensor(5, 3, 4)) },
		"transpose":  func() { Transpose(NewTensor(2, 3, 4), NewTensor(2, 3, 4)) },
		"inner":      func() { Inner(NewTensor(2, 3, 4), NewTensor(3, 2, 4)) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			f()
		})
	}
}

func TestGemmNTAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 5))
	for range 20 {
		n, wo, wi := 1+rng.IntN(9), 1+rng.IntN(11), 1+rng.IntN(13)
		lda, ldb, ldc := wi+rng.IntN(3), wi+rng.IntN(3), wo+rng.IntN(3)
		a := make([]float64, (n-1)*lda+wi)
		b := make([]float64, (wo-1)*ldb+wi)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		for name, f := range map[string]func(int, int, int, []float64, int, []float64, int, []float64, int){
			"gemmNT": gemmNT, "gemmGo": gemmGo,
		} {
			c := make([]float64, (n-1)*ldc+wo)
			for i := range c {
				c[i] = math.NaN()
			}
			f(n, wo, wi, a, lda, b, ldb, c, ldc)
			for i := range n {
				for j := range wo {
					var s float64
					for p := range wi {
						s += a[i*lda+p] * b[j*ldb+p]
					}
					if math.Abs(c[i*ldc+j]-s) > 1e-13*float64(wi) {
						t.Fatalf("%s %d×%d×%d: c(%d,%d) = %v, want %v", name, n, wo, wi, i, j, c[i*ldc+j], s)
					}
				}
			}
		}
	}
}
