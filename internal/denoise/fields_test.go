package denoise

import (
	"errors"
	"fmt"
	"testing"

	"tdsc/internal/option"
)

// fieldMode is an Enum setting's value type for the tests of Choice.
type fieldMode int

func (m fieldMode) String() string {
	if m == 0 || m == 1 {
		return [...]string{"fast", "slow"}[m]
	}
	return fmt.Sprintf("fieldMode(%d)", int(m))
}

// fieldPart and fieldOptions are a method's options with a part, as
// nonlocal's pilot is, for the tests of Fields.
type fieldPart struct{ Patch, Stride int }

type fieldOptions struct {
	Beta  float64
	Iters int
	Seed  uint64
	Ranks [3]int
	Mode  fieldMode
	Part  fieldPart
}

var partFields = Fields[fieldPart]{
	Value(Patch, func(p *fieldPart) *int { return &p.Patch }, 5),
	Rule(Stride, func(p *fieldPart) *int { return &p.Stride }, "2, at most the patch",
		func(p *fieldPart, _ float64) int { return min(2, p.Patch) }),
}

var testFields = append(Fields[fieldOptions]{
	Rule(Beta, func(o *fieldOptions) *float64 { return &o.Beta }, "3σ", func(_ *fieldOptions, sigma float64) float64 { return 3 * sigma }),
	Value(Iters, func(o *fieldOptions) *int { return &o.Iters }, 10),
	Value(Seed, func(o *fieldOptions) *uint64 { return &o.Seed }, 1),
	Triple(testAtoms, func(o *fieldOptions) *[3]int { return &o.Ranks }, "6 per mode", 6),
	Choice(Setting{Name: "mode", Kind: Enum}, func(o *fieldOptions) *fieldMode { return &o.Mode }, 0, 1),
}, Within(partFields, func(o *fieldOptions) *fieldPart { return &o.Part })...)

// TestFields checks that a method's options follow from its Fields: the
// settings with their defaults as help shows them, the values given
// copied into their fields (a list of one broadcast), the zero fields
// resolved in order (a default that depends on an earlier setting sees it
// resolved), given values kept, and the rules checked in order.
func TestFields(t *testing.T) {
	var names, defaults []string
	for _, s := range testFields.Settings() {
		names, defaults = append(names, s.Name), append(defaults, s.Default)
	}
	if got, want := fmt.Sprint(names, defaults), "[beta iters seed atoms mode patch stride] [3σ 10 1 6 per mode fast 5 2, at most the patch]"; got != want {
		t.Errorf("settings %s, want %s", got, want)
	}
	if got := testFields[4].Choices; fmt.Sprint(got) != "[fast slow]" {
		t.Errorf("choices %v", got)
	}

	v, err := parse("test", testFields.Settings(), map[string]string{"iters": "4", "atoms": "3", "mode": "slow", "patch": "1"})
	if err != nil {
		t.Fatal(err)
	}
	o := testFields.Options(v)
	want := fieldOptions{Iters: 4, Ranks: [3]int{3, 3, 3}, Mode: 1, Part: fieldPart{Patch: 1}}
	if o != want {
		t.Errorf("options %+v, want %+v", o, want)
	}
	got := testFields.Resolve(o, 20)
	want = fieldOptions{Beta: 60, Iters: 4, Seed: 1, Ranks: [3]int{3, 3, 3}, Mode: 1, Part: fieldPart{Patch: 1, Stride: 1}}
	if got != want {
		t.Errorf("resolved %+v, want %+v", got, want)
	}
	if err := testFields.Check(&got); err != nil {
		t.Errorf("Check: %v", err)
	}
	if got := testFields.Resolve(fieldOptions{Ranks: [3]int{0, 2, 0}}, 1); got.Ranks != [3]int{6, 2, 6} || got.Part.Stride != 2 {
		t.Errorf("zero entries of a list and a dependent default: %+v", got)
	}

	for _, c := range []struct {
		o     fieldOptions
		field string
	}{
		{fieldOptions{Beta: -1, Iters: 0}, "beta"},
		{fieldOptions{Beta: 1, Iters: 0}, "iters"},
		{fieldOptions{Beta: 1, Iters: 1, Ranks: [3]int{1, 0, 1}}, "atoms"},
		{fieldOptions{Beta: 1, Iters: 1, Ranks: [3]int{1, 1, 1}, Mode: 7}, "mode"},
		{fieldOptions{Beta: 1, Iters: 1, Ranks: [3]int{1, 1, 1}, Part: fieldPart{Patch: 0, Stride: 1}}, "patch"},
	} {
		var oe *option.Error
		if err := testFields.Check(&c.o); !errors.As(err, &oe) || oe.Field != c.field {
			t.Errorf("%+v: %v, want an error for %s", c.o, err, c.field)
		}
	}
}

// TestFieldsWith checks that With replaces one setting's declaration in a
// copy and that Only keeps the settings named, in order.
func TestFieldsWith(t *testing.T) {
	other := partFields.With(Value(Stride, func(p *fieldPart) *int { return &p.Stride }, 4))
	if got := other.Resolve(fieldPart{}, 1); got != (fieldPart{Patch: 5, Stride: 4}) {
		t.Errorf("with: %+v", got)
	}
	if got := partFields.Resolve(fieldPart{}, 1); got != (fieldPart{Patch: 5, Stride: 2}) {
		t.Errorf("the original changed: %+v", got)
	}
	if got := testFields.Only("stride", "beta").Settings(); len(got) != 2 || got[0].Name != "beta" || got[1].Name != "stride" {
		t.Errorf("only: %v", got)
	}
}

// TestFieldKinds checks that a setting held in a field of another type
// panics when it is declared.
func TestFieldKinds(t *testing.T) {
	for name, declare := range map[string]func(){
		"int in float": func() { Value(Patch, func(o *fieldOptions) *float64 { return &o.Beta }, 1) },
		"uint in int":  func() { Value(Seed, func(o *fieldOptions) *int { return &o.Iters }, 1) },
		"enum default": func() {
			Choice(Setting{Name: "mode", Kind: Enum}, func(o *fieldOptions) *fieldMode { return &o.Mode }, 1, 0)
		},
		"list of two": func() {
			Triple(Setting{Name: "r", Kind: IntList, Lengths: []int{2}}, func(o *fieldOptions) *[3]int { return &o.Ranks }, "", 0)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			declare()
		}()
	}
}
