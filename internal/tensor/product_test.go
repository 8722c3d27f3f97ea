package tensor_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/tensor"
	"tdsc/internal/tensor/tensortest"
)

func TestProductMatchesBlockCirculant(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 1))
	for k := 1; k <= 8; k++ {
		for range 3 {
			m, r, n := 1+rng.IntN(7), 1+rng.IntN(7), 1+rng.IntN(6)
			d := tensortest.Rand(rng, m, r, k)
			b := tensortest.Rand(rng, r, n, k)
			got := tensor.NewTensor(m, n, k)
			tensor.Product(got, d, b)
			var want mat.Dense
			want.Mul(tensortest.Circ(d), tensortest.Unfold(b))
			if !mat.EqualApprox(tensortest.Unfold(got), &want, 1e-12*float64(r*k)) {
				t.Fatalf("k=%d m=%d r=%d n=%d: D*B differs from circ(D)·unfold(B)", k, m, r, n)
			}
		}
	}
}

func TestProductAliasesOperand(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, k := range []int{3, 4, 5} {
		d := tensortest.Rand(rng, 4, 4, k)
		b := tensortest.Rand(rng, 4, 3, k)
		want := tensor.NewTensor(4, 3, k)
		tensor.Product(want, d, b)
		tensor.Product(b, d, b)
		for i, v := range want.Data {
			if b.Data[i] != v {
				t.Fatalf("k=%d: tensor.Product into its own operand differs at %d: %v, want %v", k, i, b.Data[i], v)
			}
		}
	}
}

func TestTransposeIsAdjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for k := 1; k <= 8; k++ {
		m, r, n := 1+rng.IntN(7), 1+rng.IntN(7), 1+rng.IntN(6)
		d := tensortest.Rand(rng, m, r, k)
		b := tensortest.Rand(rng, r, n, k)
		x := tensortest.Rand(rng, m, n, k)
		db := tensor.NewTensor(m, n, k)
		tensor.Product(db, d, b)
		dt := tensor.NewTensor(r, m, k)
		tensor.Transpose(dt, d)
		dtx := tensor.NewTensor(r, n, k)
		tensor.Product(dtx, dt, x)
		lhs, rhs := tensor.Inner(db, x), tensor.Inner(b, dtx)
		if math.Abs(lhs-rhs) > 1e-12*math.Sqrt(tensor.Norm2(db)*tensor.Norm2(x))*float64(k) {
			t.Errorf("k=%d: ⟨D*B, X⟩ = %v, ⟨B, D†*X⟩ = %v", k, lhs, rhs)
		}
		// circ(D†) = circ(D)ᵀ, and the tensor.DFT of D† is the slice-wise
		// conjugate transpose of that of D.
		var ct mat.Dense
		ct.CloneFrom(tensortest.Circ(d).T())
		if !mat.Equal(tensortest.Circ(dt), &ct) {
			t.Errorf("k=%d: circ(D†) ≠ circ(D)ᵀ", k)
		}
		p := tensor.NewDFT(k)
		fd, fdt := tensor.NewFTensor(m, r, k), tensor.NewFTensor(r, m, k)
		p.Forward(fd, d)
		p.Forward(fdt, dt)
		for l := range tensor.Stored(k) {
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
		back := tensor.NewTensor(m, r, k)
		tensor.Transpose(back, dt)
		for i, v := range d.Data {
			if back.Data[i] != v {
				t.Fatalf("k=%d: (D†)† ≠ D", k)
			}
		}
	}
}

func TestInnerAndNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 4))
	x := tensortest.Rand(rng, 3, 5, 7)
	y := tensortest.Rand(rng, 3, 5, 7)
	var dot, sq float64
	for i := range x.M {
		for j := range x.N {
			for tt := range x.K {
				dot += x.At(i, j, tt) * y.At(i, j, tt)
				sq += x.At(i, j, tt) * x.At(i, j, tt)
			}
		}
	}
	if got := tensor.Inner(x, y); math.Abs(got-dot) > 1e-12*math.Abs(dot)+1e-12 {
		t.Errorf("Inner = %v, want %v", got, dot)
	}
	if got := tensor.Norm2(x); math.Abs(got-sq) > 1e-12*sq {
		t.Errorf("Norm2 = %v, want %v", got, sq)
	}
}

func TestProductPanicsOnSizeMismatch(t *testing.T) {
	cases := map[string]func(){
		"inner size": func() {
			tensor.Product(tensor.NewTensor(2, 3, 4), tensor.NewTensor(2, 5, 4), tensor.NewTensor(4, 3, 4))
		},
		"tube": func() {
			tensor.Product(tensor.NewTensor(2, 3, 4), tensor.NewTensor(2, 5, 4), tensor.NewTensor(5, 3, 3))
		},
		"dst": func() {
			tensor.Product(tensor.NewTensor(2, 2, 4), tensor.NewTensor(2, 5, 4), tensor.NewTensor(5, 3, 4))
		},
		"transpose": func() { tensor.Transpose(tensor.NewTensor(2, 3, 4), tensor.NewTensor(2, 3, 4)) },
		"inner":     func() { tensor.Inner(tensor.NewTensor(2, 3, 4), tensor.NewTensor(3, 2, 4)) },
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
