package tproduct_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/algebra/tproduct/tproducttest"
)

func TestProductMatchesBlockCirculant(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 1))
	for k := 1; k <= 8; k++ {
		for range 3 {
			m, r, n := 1+rng.IntN(7), 1+rng.IntN(7), 1+rng.IntN(6)
			d := tproducttest.Rand(rng, m, r, k)
			b := tproducttest.Rand(rng, r, n, k)
			got := tproduct.NewTensor(m, n, k)
			tproduct.Product(got, d, b)
			var want mat.Dense
			want.Mul(tproducttest.Circ(d), tproducttest.Unfold(b))
			if !mat.EqualApprox(tproducttest.Unfold(got), &want, 1e-12*float64(r*k)) {
				t.Fatalf("k=%d m=%d r=%d n=%d: D*B differs from circ(D)·unfold(B)", k, m, r, n)
			}
		}
	}
}

func TestProductAliasesOperand(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, k := range []int{3, 4, 5} {
		d := tproducttest.Rand(rng, 4, 4, k)
		b := tproducttest.Rand(rng, 4, 3, k)
		want := tproduct.NewTensor(4, 3, k)
		tproduct.Product(want, d, b)
		tproduct.Product(b, d, b)
		for i, v := range want.Data {
			if b.Data[i] != v {
				t.Fatalf("k=%d: tproduct.Product into its own operand differs at %d: %v, want %v", k, i, b.Data[i], v)
			}
		}
	}
}

func TestTransposeIsAdjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for k := 1; k <= 8; k++ {
		m, r, n := 1+rng.IntN(7), 1+rng.IntN(7), 1+rng.IntN(6)
		d := tproducttest.Rand(rng, m, r, k)
		b := tproducttest.Rand(rng, r, n, k)
		x := tproducttest.Rand(rng, m, n, k)
		db := tproduct.NewTensor(m, n, k)
		tproduct.Product(db, d, b)
		dt := tproduct.NewTensor(r, m, k)
		tproduct.Transpose(dt, d)
		dtx := tproduct.NewTensor(r, n, k)
		tproduct.Product(dtx, dt, x)
		lhs, rhs := floats.Dot(db.Data, x.Data), floats.Dot(b.Data, dtx.Data)
		if math.Abs(lhs-rhs) > 1e-12*math.Sqrt(floats.Dot(db.Data, db.Data)*floats.Dot(x.Data, x.Data))*float64(k) {
			t.Errorf("k=%d: ⟨D*B, X⟩ = %v, ⟨B, D†*X⟩ = %v", k, lhs, rhs)
		}
		// circ(D†) = circ(D)ᵀ, and the tproduct.DFT of D† is the slice-wise
		// conjugate transpose of that of D.
		var ct mat.Dense
		ct.CloneFrom(tproducttest.Circ(d).T())
		if !mat.Equal(tproducttest.Circ(dt), &ct) {
			t.Errorf("k=%d: circ(D†) ≠ circ(D)ᵀ", k)
		}
		p := tproduct.NewDFT(k)
		fd, fdt := tproduct.NewFTensor(m, r, k), tproduct.NewFTensor(r, m, k)
		p.Forward(fd, d)
		p.Forward(fdt, dt)
		for l := range tproduct.Stored(k) {
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
		back := tproduct.NewTensor(m, r, k)
		tproduct.Transpose(back, dt)
		for i, v := range d.Data {
			if back.Data[i] != v {
				t.Fatalf("k=%d: (D†)† ≠ D", k)
			}
		}
	}
}

func TestProductPanicsOnSizeMismatch(t *testing.T) {
	cases := map[string]func(){
		"inner size": func() {
			tproduct.Product(tproduct.NewTensor(2, 3, 4), tproduct.NewTensor(2, 5, 4), tproduct.NewTensor(4, 3, 4))
		},
		"tube": func() {
			tproduct.Product(tproduct.NewTensor(2, 3, 4), tproduct.NewTensor(2, 5, 4), tproduct.NewTensor(5, 3, 3))
		},
		"dst": func() {
			tproduct.Product(tproduct.NewTensor(2, 2, 4), tproduct.NewTensor(2, 5, 4), tproduct.NewTensor(5, 3, 4))
		},
		"transpose": func() { tproduct.Transpose(tproduct.NewTensor(2, 3, 4), tproduct.NewTensor(2, 3, 4)) },
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
